// NVML through dlopen: GPU names, driver, memory per process and clock-event (throttle) reasons.
// No NVML header or link-time dependency: the driver's libnvidia-ml.so.1 is opened at run time, so a
// machine without an NVIDIA driver builds and runs, and reports GPU figures as not measured (an
// Error naming why), never as zeros.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

// One GPU as NVML numbers it (the index CUDA_VISIBLE_DEVICES and CTest resource ids use).
struct GpuInfo {
  unsigned index = 0;
  std::string name;   // "NVIDIA H200"
  std::string uuid;   // "GPU-…"
  uint64_t memory_total_bytes = 0;
  uint64_t memory_used_bytes = 0;
  uint64_t memory_free_bytes = 0;  // what a new allocation could still get (nvmlMemory_t.free)
};

// The driver as NVML reports it.
struct DriverInfo {
  std::string driver_version;  // "580.159.04"
  int cuda_version = 0;        // as NVML encodes it: 13000 = 13.0
  std::string cuda_version_text() const;  // "13.0"
};

// One process holding a CUDA context on a GPU.
struct GpuProcess {
  unsigned pid = 0;  // as NVML sees it: the host's pid namespace
  // Bytes the process uses on that GPU; empty where NVML cannot say (NVML_VALUE_NOT_AVAILABLE).
  std::optional<uint64_t> used_bytes;
};

// Bits of nvmlDeviceGetCurrentClocksEventReasons (formerly ...ClocksThrottleReasons).
namespace clock_event {
constexpr uint64_t kGpuIdle = 0x1;
constexpr uint64_t kApplicationsClocksSetting = 0x2;
constexpr uint64_t kSwPowerCap = 0x4;
constexpr uint64_t kHwSlowdown = 0x8;
constexpr uint64_t kSyncBoost = 0x10;
constexpr uint64_t kSwThermalSlowdown = 0x20;
constexpr uint64_t kHwThermalSlowdown = 0x40;
constexpr uint64_t kHwPowerBrakeSlowdown = 0x80;
constexpr uint64_t kDisplayClockSetting = 0x100;
// The reasons that mean the clocks were pulled down by power or heat (what a timing must report).
constexpr uint64_t kSlowdownMask =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clock_event

// A clock-event reason bit set.
struct ClockEvents {
  uint64_t bits = 0;
  bool any_slowdown() const { return (bits & clock_event::kSlowdownMask) != 0; }
};
// Names of the set bits, e.g. {"SW power cap", "HW thermal slowdown"}; unknown bits as "bit 0x…".
std::vector<std::string> clock_event_names(uint64_t bits);
// Names joined with ", ", or "none".
std::string describe_clock_events(uint64_t bits);

// A point reading of one GPU's clocks, temperature and power.
struct GpuReading {
  unsigned sm_clock_mhz = 0;
  unsigned memory_clock_mhz = 0;
  unsigned temperature_c = 0;
  unsigned power_mw = 0;
  ClockEvents events;
};

// An open NVML session; movable, not copyable; shuts NVML down when the last copy goes.
class Nvml {
 public:
  // Opens libnvidia-ml.so.1 and initialises NVML. Errors: "not measured: libnvidia-ml.so.1 not found
  // (no NVIDIA driver)", a missing function, or nvmlInit's error text.
  static Result<Nvml> open();
  // The same with another library name or path (tests; drivers installed under another name).
  static Result<Nvml> open_library(const std::string& soname);

  Result<unsigned> gpu_count() const;
  // Every GPU NVML sees; a GPU whose name or memory cannot be read is an Error for the whole list.
  Result<std::vector<GpuInfo>> gpus() const;
  Result<DriverInfo> driver() const;
  // Processes with a CUDA context on GPU `gpu` (compute processes, nvmlDeviceGetComputeRunningProcesses_v3).
  Result<std::vector<GpuProcess>> processes(unsigned gpu) const;
  // Bytes `pid` uses on GPU `gpu`. Error when the pid holds no context there or NVML cannot say.
  Result<uint64_t> process_memory_bytes(unsigned gpu, pid_t pid) const;
  Result<ClockEvents> clock_events(unsigned gpu) const;
  Result<GpuReading> reading(unsigned gpu) const;

  struct Api;  // the resolved entry points (defined in nvml.cpp)

 private:
  explicit Nvml(std::shared_ptr<const Api> api) : api_(std::move(api)) {}
  Result<void*> device(unsigned gpu) const;
  std::shared_ptr<const Api> api_;
};

// CTest's resource specification (version 1.0) for these GPUs: one "gpus" resource per GPU, id =
// NVML index, one slot each, for tests that declare RESOURCE_GROUPS "gpus:1".
std::string ctest_resource_spec_json(const std::vector<GpuInfo>& gpus);

// An NVML error as a reason ("libnvidia-ml.so.1 not found ..."), without the "not measured: " that
// reports put before a figure NVML could not give.
std::string nvml_reason(const Error& e);

}  // namespace fp
