// Samples NVML in the background while a runtime runs: peak GPU memory of each of the runtime's
// processes and every clock-event (throttle) reason seen. Without NVML the report says "not measured"
// and why; it never reports zeros as if they were readings.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "measure/nvml.h"
#include "util/result.h"

namespace fp {

// Peak memory of one process on one GPU.
struct ProcessGpuPeak {
  pid_t pid = 0;
  unsigned gpu = 0;
  uint64_t peak_bytes = 0;
};

// What a sampling run saw.
struct GpuSamplerReport {
  bool measured = false;
  std::string not_measured_reason;  // set when !measured: why there are no GPU figures
  unsigned samples = 0;
  std::vector<ProcessGpuPeak> process_peaks;  // the watched pids NVML listed, by pid then gpu
  uint64_t peak_total_bytes = 0;  // largest sum over watched processes and GPUs in one sample
  uint64_t clock_event_bits = 0;  // union of the reasons seen on the sampled GPUs
  unsigned slowdown_samples = 0;  // samples with a power or thermal slowdown reason set
  unsigned max_temperature_c = 0;
  unsigned max_power_mw = 0;
  std::optional<unsigned> min_sm_clock_mhz;  // over samples taken while a watched process was on the GPU
  std::vector<pid_t> other_pids_seen;        // NVML listed them, not in the watched set (pid namespace?)
  std::vector<std::string> errors;           // distinct sampling errors (first few)

  // Names of the slowdown reasons seen, e.g. {"SW power cap", "HW thermal slowdown"}.
  std::vector<std::string> slowdown_names() const;
  // A few plain lines for the result file.
  std::string describe() const;
};

// Folds samples into a report; separate from the thread so it can be tested without a GPU.
class GpuSampleAccumulator {
 public:
  // One sample: processes listed on each GPU and that GPU's reading (if it could be read).
  struct GpuSample {
    unsigned gpu = 0;
    std::vector<GpuProcess> processes;
    std::optional<GpuReading> reading;
  };
  void add(const std::vector<GpuSample>& gpus, const std::set<pid_t>& watched);
  void add_error(const std::string& message);
  GpuSamplerReport report() const;

 private:
  GpuSamplerReport r_;
  std::map<std::pair<pid_t, unsigned>, uint64_t> peaks_;
  std::set<pid_t> other_pids_;
};

// The pids whose process group is `pgid`, read from /proc (the runtime and every worker it started).
std::vector<pid_t> pids_in_process_group(pid_t pgid);
// The process group field of a /proc/<pid>/stat line; empty if the line does not parse.
std::optional<pid_t> process_group_from_stat(std::string_view stat_line);

struct GpuSamplerOptions {
  std::chrono::milliseconds interval{250};
  std::vector<unsigned> gpus;  // empty: every GPU NVML sees
};

// Background sampler: start(), let the runtime work, stop() for the report.
class GpuSampler {
 public:
  using PidSource = std::function<std::vector<pid_t>()>;
  // `nvml` is the caller's open session or the error that explains its absence; `pids` is asked at
  // every sample (workers come and go), e.g. [pgid] { return pids_in_process_group(pgid); }.
  GpuSampler(Result<Nvml> nvml, PidSource pids, GpuSamplerOptions options = {});
  ~GpuSampler();
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  void start();
  // Stops the thread (takes one last sample) and returns what was seen. Safe to call twice.
  GpuSamplerReport stop();

 private:
  void run();
  void sample_once();

  Result<Nvml> nvml_;
  PidSource pids_;
  GpuSamplerOptions options_;
  std::vector<unsigned> gpus_;
  GpuSampleAccumulator acc_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace fp
