// Prints what flashproof's NVML layer reads on this machine: GPUs, driver, CUDA version, clocks,
// clock-event reasons, memory per process (for --pid), a short GpuSampler run over those pids, and
// the CTest resource spec. Exit 0 when every query answered, 1 when one failed on a machine with a
// GPU, 125 (CTest skip) when there is no NVIDIA driver or no GPU, with the reason printed.
//
// Usage: flashproof_nvml_check [--pid PID]... [--sample-ms MS]
//        flashproof_nvml_check --resource-spec     (only the JSON, for ctest --resource-spec-file)
#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "measure/gpu_sampler.h"
#include "measure/nvml.h"

namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

int usage(const char* why) {
  std::fprintf(stderr,
               "flashproof_nvml_check: %s\nusage: flashproof_nvml_check [--pid PID]... [--sample-ms MS] | --resource-spec\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<pid_t> pids;
  long sample_ms = 0;
  bool spec_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--resource-spec") {
      spec_only = true;
    } else if ((arg == "--pid" || arg == "--sample-ms") && i + 1 < argc) {
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value <= 0) return usage(("not a positive number for " + arg + ": " + argv[i]).c_str());
      if (arg == "--pid") pids.push_back(static_cast<pid_t>(value));
      else sample_ms = value;
    } else {
      return usage(("unknown argument: " + arg).c_str());
    }
  }

  auto nvml = fp::Nvml::open();
  if (!nvml) {
    std::fprintf(spec_only ? stderr : stdout, "SKIP: %s\n", nvml.error().message.c_str());
    return 125;
  }
  if (spec_only) {
    const auto gpus = nvml->gpus();
    if (!gpus) {
      std::fprintf(stderr, "%s\n", gpus.error().message.c_str());
      return 1;
    }
    std::fputs(fp::ctest_resource_spec_json(*gpus).c_str(), stdout);
    return 0;
  }
  int failures = 0;
  auto fail = [&failures](const fp::Error& e) {
    std::printf("FAIL: %s\n", e.message.c_str());
    ++failures;
  };

  const auto driver = nvml->driver();
  if (driver) {
    std::printf("driver: %s\ncuda (driver API): %s (%d)\n", driver->driver_version.c_str(),
                driver->cuda_version_text().c_str(), driver->cuda_version);
  } else {
    fail(driver.error());
  }
  const auto gpus = nvml->gpus();
  if (!gpus) {
    fail(gpus.error());
    return 1;
  }
  if (gpus->empty()) {
    std::printf("SKIP: NVML sees no GPU\n");
    return 125;
  }
  for (const auto& g : *gpus) {
    std::printf("gpu %u: %s %s, memory %.0f MiB total, %.0f MiB used\n", g.index, g.name.c_str(), g.uuid.c_str(),
                mib(g.memory_total_bytes), mib(g.memory_used_bytes));
    const auto rd = nvml->reading(g.index);
    if (rd) {
      std::printf("gpu %u: SM clock %u MHz, memory clock %u MHz, %u C, %.1f W, clock event reasons 0x%llx: %s\n",
                  g.index, rd->sm_clock_mhz, rd->memory_clock_mhz, rd->temperature_c, rd->power_mw / 1000.0,
                  static_cast<unsigned long long>(rd->events.bits), fp::describe_clock_events(rd->events.bits).c_str());
    } else {
      fail(rd.error());
    }
    const auto procs = nvml->processes(g.index);
    if (!procs) {
      fail(procs.error());
      continue;
    }
    std::printf("gpu %u: %zu compute process(es)\n", g.index, procs->size());
    for (const auto& p : *procs) {
      if (p.used_bytes) std::printf("  pid %u: %.1f MiB\n", p.pid, mib(*p.used_bytes));
      else std::printf("  pid %u: memory not available from NVML\n", p.pid);
    }
  }
  for (pid_t pid : pids) {
    bool found = false;
    for (const auto& g : *gpus) {
      const auto bytes = nvml->process_memory_bytes(g.index, pid);
      if (bytes) {
        std::printf("process_memory_bytes(gpu %u, pid %d) = %llu (%.1f MiB)\n", g.index, static_cast<int>(pid),
                    static_cast<unsigned long long>(*bytes), mib(*bytes));
        found = true;
      } else {
        std::printf("process_memory_bytes(gpu %u, pid %d): %s\n", g.index, static_cast<int>(pid),
                    bytes.error().message.c_str());
      }
    }
    if (!found) fail(fp::Error{"pid " + std::to_string(pid) + " was found on no GPU"});
  }
  if (sample_ms > 0) {
    fp::GpuSampler sampler(fp::Nvml::open(), [pids] { return pids; }, fp::GpuSamplerOptions{std::chrono::milliseconds(100), {}});
    sampler.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(sample_ms));
    const auto report = sampler.stop();
    std::printf("--- GpuSampler, %ld ms at 100 ms ---\n%s", sample_ms, report.describe().c_str());
    if (!report.measured) fail(fp::Error{report.not_measured_reason});
  }
  std::printf("--- CTest resource spec ---\n%s", fp::ctest_resource_spec_json(*gpus).c_str());
  return failures == 0 ? 0 : 1;
}
