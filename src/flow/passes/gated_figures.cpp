#include "flow/passes/gated_figures.h"

#include <algorithm>

#include "case/effect_defaults.h"
#include "figure/figure_registry.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {

std::vector<std::string> paired_gated_figures(Job job) { return job_gated_figures(kPairedEngine, figure_job(job)); }

std::vector<std::string> paired_gated_figures(const Case& c) {
  return c.plan.gated.empty() ? paired_gated_figures(c.job) : c.plan.gated;
}

MinEffect host_clock_min_effect_on_gpu(const std::string& figure, const Golden* recorded, std::string* how) {
  const double floor = default_floor(figure);
  // The figure's own spread only. A side-by-side figure whose golden-path counterpart has another
  // definition (itl_mean_ms, per launch the median of each request's mean gap, against the golden's
  // itl_ms, every gap pooled: figure/figure_registry.h FigureDef::golden_name) has another spread, and
  // the golden path does not record it.
  const FigureDef* def = figure_def(figure);
  const GoldenFigure* g = nullptr;
  if (recorded)
    if (auto it = recorded->figures.find(figure); it != recorded->figures.end()) g = &it->second;
  if (!g || g->n < 3 || !(g->median > 0)) {
    const std::string counterpart = def && !def->golden_name.empty() ? std::string(def->golden_name) : "";
    *how = figure + " at " + pct(kHostClockOnGpuMinEffect).substr(1) +
           (counterpart.empty() ? ": no golden of this case on this machine records its spread over 3 or more launches"
                                : ": goldens record " + counterpart + ", another definition, not its spread");
    return MinEffect{kHostClockOnGpuMinEffect, floor};
  }
  const double sd_rel = 1.4826 * g->spread / g->median;
  const double rel = std::clamp(kHostClockSpreadFactor * sd_rel, kHostClockSpreadLow, kHostClockOnGpuMinEffect);
  *how = figure + " at " + pct(rel).substr(1) + ": 3 x its launch-to-launch sd " + pct(sd_rel).substr(1) +
         " recorded on this machine (golden, " + std::to_string(g->n) + " launches), within " + pct(kHostClockSpreadLow).substr(1) +
         " .. " + pct(kHostClockOnGpuMinEffect).substr(1);
  return MinEffect{rel, floor};
}

GatedFigures gated_figures(const Case& c, bool runs_on_cuda, bool kernel_probe_attaches, const Golden* recorded) {
  GatedFigures g;
  std::map<std::string, MinEffect> defaults;
  if (!c.plan.gated.empty()) {
    g.figures = c.plan.gated;
    g.note = "the case's plan.gated";
  } else {
    const std::vector<std::string> job = paired_gated_figures(c.job);
    if (!job.empty() && runs_on_cuda && kernel_probe_attaches) {
      g.figures.push_back("gpu_kernel_ms_per_token");
      defaults["gpu_kernel_ms_per_token"] = MinEffect{kKernelTimeMinEffect, default_floor("gpu_kernel_ms_per_token")};
      std::vector<std::string> hows;
      for (const auto& f : job) {
        g.figures.push_back(f);
        std::string how;
        defaults[f] = host_clock_min_effect_on_gpu(f, recorded, &how);
        hows.push_back(how);
      }
      g.note =
          std::string("the ") + job_name(c.job) +
          " job's on CUDA with the kernel probe: GPU kernel time per token first (low noise; a probed launch per arm and block serving "
          "the job's load, as the nightly's probed check), host-clock figures at a minimum effect from their recorded spread (" +
          join(hows, "; ") + ")";
    } else {
      g.figures = job;
      g.note = std::string("the ") + job_name(c.job) + " job's";
      if (!job.empty() && runs_on_cuda) g.note += " (no GPU kernel time: the kernel probe does not attach here)";
    }
  }
  for (const auto& f : g.figures) {
    auto d = defaults.find(f);
    g.min_effect[f] = case_min_effect(c, f) ? min_effect(c, f) : d != defaults.end() ? d->second : min_effect(c, f);
  }
  for (const auto& f : paired_figure_names()) {
    if (std::find(g.figures.begin(), g.figures.end(), f) != g.figures.end()) continue;
    if (auto guard = guard_effect(c, f)) g.guards[f] = *guard;
  }
  return g;
}

bool needs_kernel_probe(const std::vector<std::string>& figures) {
  return std::any_of(figures.begin(), figures.end(), [](const std::string& f) {
    const FigureDef* d = figure_def(gated_figure_name(f));
    return d && d->source == FigureSource::probe && (d->engines & kPairedEngine);
  });
}

}  // namespace fp
