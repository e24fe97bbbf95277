// A CPU quota for one arm of a side-by-side run: a real, exactly sized slowdown of a runtime, for
// calibrating the gate (a k% throttle must be called a regression) without touching the runtime.
// The runtime joins a cgroup-v1 `cpu` controller group whose CFS quota is (1 - k) x the machine's
// CPUs x the period: over every period it may use that much CPU time and then waits. CPU-bound
// phases (prompt processing, decode on the CPU) slow down by about k; on a GPU box, leave the
// accelerator's settings alone and use a prompt length or another build instead.
#pragma once

#include <string>

#include "util/result.h"

namespace fp {

class CpuQuota {
 public:
  CpuQuota() = default;
  CpuQuota(const CpuQuota&) = delete;
  CpuQuota& operator=(const CpuQuota&) = delete;
  CpuQuota(CpuQuota&& other) noexcept;
  CpuQuota& operator=(CpuQuota&& other) noexcept;
  ~CpuQuota();  // removes the group (its processes have exited by then)

  // Creates <cpu controller>/flashproof-<pid>-<tag> with cpu.cfs_quota_us = share x CPUs x period.
  // share in (0, 1). The controller is found in /proc/self/mounts (cgroup v1 "cpu"), or
  // $FLASHPROOF_CGROUP_CPU. Errors say what is missing (no v1 cpu controller, not writable).
  static Result<CpuQuota> create(double share, const std::string& tag);

  // The group's cgroup.procs (LaunchSpec::cgroup_procs); empty for a default-constructed quota.
  const std::string& procs_file() const { return procs_; }
  // "CPU quota 95% of 2 CPUs (cfs_quota_us 190000 per 100000)".
  const std::string& describe() const { return text_; }

 private:
  std::string dir_, procs_, text_;
};

// The mount point of the cgroup-v1 cpu controller, from a /proc/self/mounts text; empty when none.
std::string cgroup_v1_cpu_mount(const std::string& mounts_text);

}  // namespace fp
