// Low-noise figures in a case run (the golden path): the GPU time per token of every kernel and of
// the attention kernels, from the probed checks that follow each timed launch (flow/passes/probed_check.h;
// never from the timed launches, which carry no probe), one value per launch; and on a GPU box the
// job's gates as the side-by-side gate sets them (flow/passes/gated_figures.h): kernel time
// first at kKernelTimeNightlyMinEffect (1.25%: a 2% change caught on nearly every night), the host-clock
// figures the job gates at kHostClockOnGpuMinEffect,
// unless the case names its own. Per token, so that a case's workload size does not matter. The
// runtime's own timings and its CPU time per token are the job's figures (flow/passes/figures.h).
#pragma once

#include <string>
#include <vector>

#include "case/case_file.h"
#include "result/run_result.h"

namespace fp {

// Whether the case expects its fused attention on a CUDA device (where the probe can time it);
// `gpu_backends`: the machine's GPU backends, for "all-gpus".
bool expects_cuda(const Case& c, const std::vector<std::string>& gpu_backends);

// gpu_kernel_ms_per_token and attention_kernel_ms_per_token from each probed launch's values (NaN:
// not measured in that launch, left out); no figure when no launch measured it.
std::vector<FigureResult> kernel_figures(const std::vector<double>& gpu_ms_per_token,
                                         const std::vector<double>& attention_ms_per_token);

// The golden path's gates. A case with plan.gated gates exactly those figures (gpu_kernel_ms and
// attention_kernel_ms as their per-token figures), in every mode alike. Otherwise on a GPU box,
// where `cuda` and the run measured gpu_kernel_ms_per_token, it gates first (1.25% unless the case
// names it) and the job's gated host-clock figures take 25% unless the case names them. Figures no longer gated lose nothing:
// guards are set afterwards from what gates. Returns a line saying which choice applied ("" none).
std::string apply_gpu_gates(const Case& c, bool cuda, std::vector<FigureResult>& figures);

}  // namespace fp
