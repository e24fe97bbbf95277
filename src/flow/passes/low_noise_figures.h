// Low-noise figures in a case run (the golden path): the GPU time per token of every kernel and of
// the attention kernels, from the probed checks that follow each timed launch (flow/passes/probed_check.h;
// never from the timed launches, which carry no probe), one value per launch; the side-by-side gate
// measures the same figures the same way (kernel_time_per_token below); and on a GPU box the
// job's gates as the side-by-side gate sets them (flow/passes/gated_figures.h): kernel time
// first at kKernelTimeNightlyMinEffect (1.25%: a 2% change caught on nearly every night), the host-clock
// figures the job gates at kHostClockOnGpuMinEffect,
// unless the case names its own. Per token, so that a case's workload size does not matter. The
// runtime's own timings and its CPU time per token are the job's figures (flow/passes/figures.h).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "evidence/kernel_tally.h"
#include "result/run_result.h"

namespace fp {

// The one definition of gpu_kernel_ms_per_token and attention_kernel_ms_per_token
// (figure/figure_registry.h), for the golden path's probed checks and the side-by-side gate's probed
// launches alike: the GPU time of a probed launch's kernels (every kernel; the attention kernels,
// fused and unfused) over the prompt and output tokens of the requests it served (the job's load,
// flow/passes/evidence_pass.h send_job_load). Per token, so that a launch's start-up and its one
// prefill weigh as the load made them: a change that slows prefill on the GPU (fewer tokens per
// micro-batch) moves it as it moves the server's own prompt time. NaN where the tally holds no kernel
// time or the requests no token.
struct KernelTimePerToken {
  double gpu_ms = std::numeric_limits<double>::quiet_NaN();
  double attention_ms = std::numeric_limits<double>::quiet_NaN();
};
KernelTimePerToken kernel_time_per_token(const KernelSummary& kernels, long long tokens);

// Whether the case expects its fused attention on a CUDA device (where the probe can time it);
// `gpu_backends`: the machine's GPU backends, for "all-gpus".
bool expects_cuda(const Case& c, const std::vector<std::string>& gpu_backends);

// gpu_kernel_ms_per_token and attention_kernel_ms_per_token from each probed launch's values (NaN:
// not measured in that launch, left out); no figure when no launch measured it.
std::vector<FigureResult> kernel_figures(const std::vector<double>& gpu_ms_per_token,
                                         const std::vector<double>& attention_ms_per_token);

// The golden path's gates. A case with plan.gated gates exactly those figures (a side-by-side figure
// whose golden-path counterpart has another name as that counterpart: itl_mean_ms as itl_ms), in
// every mode alike. Otherwise on a GPU box,
// where `cuda` and the run measured gpu_kernel_ms_per_token, it gates first (1.25% unless the case
// names it) and the job's gated host-clock figures take 25% unless the case names them. Figures no longer gated lose nothing:
// guards are set afterwards from what gates. Returns a line saying which choice applied ("" none).
std::string apply_gpu_gates(const Case& c, bool cuda, std::vector<FigureResult>& figures);

}  // namespace fp
