// What a case gates on and at which minimum effect, low-noise figures first: one rule for the
// side-by-side engine (flow/paired/paired_runner.h) and the golden path (flow/passes/low_noise_figures.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "util/min_effect.h"

namespace fp {

// The figures the job gates on in the side-by-side gate: chat ttft_ms; completion ttft_ms and
// itl_ms; batch throughput_tokens_per_s; extraction none (answers decide).
std::vector<std::string> paired_gated_figures(Job job);
// The case's choice (plan.gated) where it made one, the job's otherwise.
std::vector<std::string> paired_gated_figures(const Case& c);
// Whether one of the figures is measured from the kernels the GPU ran (the CUPTI probe).
bool needs_kernel_probe(const std::vector<std::string>& figures);

// What the side-by-side gate gates on, low-noise figures first. The case's plan.gated where it names
// figures; otherwise the job's (paired_gated_figures), and where the case runs on CUDA and the kernel
// probe attaches here, the GPU time of every kernel first: minimum effect 2% for it, 25% for the
// job's host-clock figures. Why: on the H200 the kernels' block spread was 0.1-0.3%, TTFT's 2-18%
// (whole launches 20-50% slower in host bursts, in either build: fixtures/logs/h200-live/gate/README.md).
// TTFT cannot resolve 2% there within minutes; at 25% identical builds resolve within the default
// budget in 98% of simulated trials even when one launch in four bursts (PairedGateSimulation.GpuDefault*),
// at 20% in 89%. plan.min_effect overrides any figure's minimum effect. Every figure keeps its floor
// (case/effect_defaults.h). Guards: the figures a user feels (case/effect_defaults.h
// user_felt_figures) among paired_figure_names() that are not gated, at the case's guard_effect.
inline constexpr double kKernelTimeMinEffect = 0.02;
inline constexpr double kHostClockOnGpuMinEffect = 0.25;
struct GatedFigures {
  std::vector<std::string> figures;
  std::map<std::string, MinEffect> min_effect;  // every figure in `figures`
  std::map<std::string, MinEffect> guards;      // the guarded figures and their guard effects
  std::string note;                             // where the choice came from, one line
};
GatedFigures gated_figures(const Case& c, bool runs_on_cuda, bool kernel_probe_attaches);

}  // namespace fp
