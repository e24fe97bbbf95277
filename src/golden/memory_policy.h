// The memory policy: memory figures are nearly deterministic (the runtime sizes its KV cache and
// compute buffers from the model and the launch line), so they are compared tightly in every mode
// (golden comparison, side-by-side gate) instead of by a noise band: a growth beyond the tolerance
// fails, naming the figure and both values; a drop beyond it is reported; a KV cache that moved
// between devices fails in its own words. Spare memory is what absorbs a longer prompt, a
// background process or a second model: an upgrade that doubles the compute buffer or moves the
// KV cache off the GPU must not pass.
//
// Figures (MiB), one value per launch, named so that a golden keeps them beside the timing figures:
//   memory.kv_cache_mib                 the runtime's KV cache, all devices (its own log line)
//   memory.kv_cache_mib.<device>        per device, e.g. memory.kv_cache_mib.CUDA0
//   memory.compute_mib.<device>         compute buffer per device (its own log line)
//   memory.host_peak_rss_mib            the runtime's peak resident set (VmHWM before it stops)
//   memory.gpu_peak_mib                 peak GPU memory of the runtime's processes (NVML, summed)
// Tolerance: a change counts when it is beyond BOTH the relative and the absolute part, i.e. beyond
// max(relative * |before|, absolute_mib). Defaults per figure: memory_tolerance().
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fp {

inline constexpr const char* kMemoryPrefix = "memory.";
// Buffers the runtime sizes itself (KV cache, compute): the same launch line gives the same bytes
// (spread 0 across launches here); 2% and 16 MiB leave room for a runtime's rounding only.
inline constexpr double kBufferRelativeTolerance = 0.02;
inline constexpr double kBufferAbsoluteToleranceMib = 16;

// Whether `figure` is a memory figure ("memory.*").
bool is_memory_figure(const std::string& figure);

struct MemoryTolerance {
  double relative = kBufferRelativeTolerance;
  double absolute_mib = kBufferAbsoluteToleranceMib;
  double at(double before) const;  // max(relative * |before|, absolute_mib)
};
// The figure's tolerance: buffers 2% / 16 MiB; process peaks (host RSS, GPU) by their spread across
// launches measured here (memory_policy.cpp says the figures).
MemoryTolerance memory_tolerance(const std::string& figure);

enum class MemoryStatus { same, grew, dropped };
const char* to_string(MemoryStatus s);

struct MemoryJudgement {
  MemoryStatus status = MemoryStatus::same;
  double before = 0, after = 0;  // MiB
  double change = 0;             // after - before, MiB
  double tolerance = 0;          // MiB, at `before`
  bool failed() const { return status == MemoryStatus::grew; }
  // "memory.compute_mib.CPU grew: 19 -> 87 MiB (+68 MiB, +358%), beyond the tolerance of 16 MiB (2%, at least 16 MiB)"
  std::string message;
};
// `before`: the golden's (or the baseline's) value; `after`: this run's (or the candidate's).
MemoryJudgement judge_memory(const std::string& figure, double before, double after);

// The devices holding KV cache in a set of figures (memory.kv_cache_mib.<device> with a value > 0).
std::vector<std::string> kv_cache_devices(const std::map<std::string, double>& figures);
// "KV CACHE MOVED: CUDA0 -> CPU (memory.kv_cache_mib.CUDA0 1024 MiB before, none now; ...)" when the
// devices holding KV cache differ; nullopt when they are the same (or either side names none).
std::optional<std::string> kv_cache_moved(const std::map<std::string, double>& before,
                                          const std::map<std::string, double>& after);

}  // namespace fp
