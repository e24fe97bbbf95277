// Memory as figures (golden/memory_policy.h names them): one value per launch, so that a golden
// keeps them beside the timing figures and every mode compares them by the memory policy. From each
// timed launch: the runtime's own KV cache and compute buffer lines in its log (per device), its
// peak resident set, and the peak GPU memory of its processes (NVML).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "evidence/log_scan.h"
#include "flow/passes/timed_pass.h"
#include "result/run_result.h"

namespace fp {

// What one launch held.
struct LaunchMemory {
  std::map<std::string, double> kv_mib_by_device, compute_mib_by_device;
  std::optional<double> kv_total_mib, host_peak_rss_mib, gpu_peak_mib;
};

// One launch's memory from its pass and its log's scan.
LaunchMemory launch_memory(const TimedPass& pass, const LogScan& scan);

// The memory figures of a run's launches: per figure every launch's value in launch order (samples
// and launch medians alike), lower is better, gated (the memory policy applies in every mode). A
// figure appears when at least one launch measured it.
std::vector<FigureResult> memory_figures(const std::vector<LaunchMemory>& launches);

}  // namespace fp
