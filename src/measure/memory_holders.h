// Who else holds memory where a runtime's KV cache lives, read while it serves: the processes NVML
// lists on a GPU, and the host processes a case's neighbours name (measure/shared_card.h). The
// runtime flashproof launched (its process group) and flashproof with its ancestors are left out.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/kv_headroom.h"
#include "measure/nvml.h"

namespace fp {

// /proc/PID/cmdline's NUL-separated arguments joined by spaces.
std::string joined_cmdline(std::string_view raw);

// VmRSS of a /proc/PID/status text, in bytes; none when absent.
std::optional<uint64_t> resident_bytes(std::string_view status);

// The process NVML lists as `pid`, named from /proc (comm, cmdline); command "" where /proc does not
// show it (NVML gives the host's pids: another pid namespace). `used_bytes` is NVML's figure.
OtherProcess describe_process(unsigned pid, std::optional<uint64_t> used_bytes);

// The processes on GPU `gpu` other than those of process group `runtime_pgid` and flashproof itself.
Result<std::vector<OtherProcess>> other_gpu_processes(const Nvml& nvml, unsigned gpu, pid_t runtime_pgid);

// Host processes whose command name or line `matches_process` one of `needles` (mib: VmRSS), other
// than those of `runtime_pgid`, flashproof and its ancestors (the shell or CTest that started it).
std::vector<OtherProcess> host_processes_matching(const std::vector<std::string>& needles, pid_t runtime_pgid);

}  // namespace fp
