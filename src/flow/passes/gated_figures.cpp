#include "flow/passes/gated_figures.h"

#include <algorithm>

#include "case/effect_defaults.h"
#include "figure/figure_registry.h"

namespace fp {

std::vector<std::string> paired_gated_figures(Job job) {
  switch (job) {
    case Job::Chat: return {"ttft_ms"};
    case Job::Completion: return {"ttft_ms", "itl_mean_ms"};
    case Job::Batch: return {"throughput_tokens_per_s"};
    case Job::Extraction: return {};
  }
  return {};
}

std::vector<std::string> paired_gated_figures(const Case& c) {
  return c.plan.gated.empty() ? paired_gated_figures(c.job) : c.plan.gated;
}

GatedFigures gated_figures(const Case& c, bool runs_on_cuda, bool kernel_probe_attaches) {
  GatedFigures g;
  std::map<std::string, MinEffect> defaults;
  if (!c.plan.gated.empty()) {
    g.figures = c.plan.gated;
    g.note = "the case's plan.gated";
  } else {
    const std::vector<std::string> job = paired_gated_figures(c.job);
    if (!job.empty() && runs_on_cuda && kernel_probe_attaches) {
      g.figures.push_back("gpu_kernel_ms");
      defaults["gpu_kernel_ms"] = MinEffect{kKernelTimeMinEffect, default_floor("gpu_kernel_ms")};
      for (const auto& f : job) {
        g.figures.push_back(f);
        defaults[f] = MinEffect{kHostClockOnGpuMinEffect, default_floor(f)};
      }
      g.note = std::string("the ") + job_name(c.job) +
               " job's on CUDA with the kernel probe: GPU kernel time first (low noise), host-clock figures at a wider minimum effect";
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
    const FigureDef* d = figure_def(f);
    return d && d->source == FigureSource::probe && (d->engines & kPairedEngine);
  });
}

}  // namespace fp
