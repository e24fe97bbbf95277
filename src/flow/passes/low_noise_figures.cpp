#include "flow/passes/low_noise_figures.h"

#include <algorithm>
#include <cmath>

#include "case/effect_defaults.h"
#include "figure/figure_registry.h"
#include "flow/passes/gated_figures.h"
#include "util/text.h"

namespace fp {
namespace {

void add_per_launch(std::vector<FigureResult>& out, const std::string& name, const std::vector<double>& values) {
  FigureResult f;
  f.name = name;
  for (double v : values)
    if (std::isfinite(v)) f.samples.push_back(v);
  if (f.samples.empty()) return;
  f.launch_medians = f.samples;
  f.summary = summarize(f.samples);
  f.lower_is_better = true;
  out.push_back(std::move(f));
}

bool is_memory(const std::string& name) { return starts_with(name, "memory."); }

FigureResult* find(std::vector<FigureResult>& figures, const std::string& name) {
  auto it = std::find_if(figures.begin(), figures.end(), [&](const FigureResult& f) { return f.name == name; });
  return it == figures.end() ? nullptr : &*it;
}

}  // namespace

bool expects_cuda(const Case& c, const std::vector<std::string>& gpu_backends) {
  for (const auto& b : c.expect.backends) {
    if (starts_with(b, "CUDA")) return true;
    if (b == "all-gpus")
      for (const auto& g : gpu_backends)
        if (starts_with(g, "CUDA")) return true;
  }
  return false;
}

KernelTimePerToken kernel_time_per_token(const KernelSummary& kernels, long long tokens) {
  KernelTimePerToken out;
  if (tokens <= 0 || kernels.total_ns <= 0) return out;
  out.gpu_ms = static_cast<double>(kernels.total_ns) * 1e-6 / static_cast<double>(tokens);
  out.attention_ms = static_cast<double>(kernels.fused_ns + kernels.unfused_ns) * 1e-6 / static_cast<double>(tokens);
  return out;
}

std::vector<FigureResult> kernel_figures(const std::vector<double>& gpu_ms_per_token, const std::vector<double>& attention_ms_per_token) {
  std::vector<FigureResult> out;
  add_per_launch(out, "gpu_kernel_ms_per_token", gpu_ms_per_token);
  add_per_launch(out, "attention_kernel_ms_per_token", attention_ms_per_token);
  return out;
}

std::string apply_gpu_gates(const Case& c, bool cuda, std::vector<FigureResult>& figures) {
  FigureResult* kernel = find(figures, "gpu_kernel_ms_per_token");
  if (!c.plan.gated.empty()) {
    // The case chose its gated figures: the golden path gates exactly those (the side-by-side
    // gate's names; itl_mean_ms is the golden path's itl_ms, the kernel figures are one name each).
    std::vector<std::string> names;
    for (const auto& g : c.plan.gated) {
      const FigureDef* d = figure_def(g);
      names.push_back(d && !d->golden_name.empty() ? std::string(d->golden_name) : g);
    }
    std::string named;
    for (auto& f : figures) {
      if (is_memory(f.name)) continue;
      f.gate = std::find(names.begin(), names.end(), base_figure_name(f.name)) != names.end();
      if (f.gate) named += (named.empty() ? "" : ", ") + f.name;
    }
    return "the case's plan.gated: " + (named.empty() ? std::string("none of them measured in this run") : named);
  }
  if (!cuda || !kernel) return "";
  kernel->gate = true;
  if (!case_min_effect(c, kernel->name)) kernel->min_effect = MinEffect{kKernelTimeNightlyMinEffect, default_floor(kernel->name)};
  for (auto& f : figures)
    if (f.gate && &f != kernel && !case_min_effect(c, f.name))
      f.min_effect = MinEffect{kHostClockOnGpuMinEffect, default_floor(f.name)};
  return "on CUDA with the kernel probe: GPU kernel time per token gated first at 1.25%, the job's host-clock figures at 25%";
}

}  // namespace fp
