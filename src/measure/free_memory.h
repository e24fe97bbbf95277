// Memory left beside a loaded runtime: the host's MemAvailable (/proc/meminfo: what new allocations
// can get without swapping, page cache that can be dropped included) and each GPU's free memory
// (NVML), read while the runtime serves a case. The lowest of several readings is what the headroom
// (measure/kv_headroom.h) counts: room that was there only between requests is no room.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measure/kv_headroom.h"
#include "measure/nvml.h"

namespace fp {

struct FreeMemory {
  std::optional<uint64_t> host_available_bytes;   // MemAvailable; none where /proc/meminfo has none
  std::map<unsigned, uint64_t> gpu_free_bytes;    // NVML index -> free bytes
  std::map<unsigned, std::string> gpu_names;      // NVML index -> "NVIDIA H200"
  std::string gpu_why_not;                        // why there are no GPU readings (no NVML, ...)
  int readings = 0;                               // how many readings the lowest values come from
  // Beside the runtime (read_free_memory's `beside`), as they were at each lowest reading: the other
  // processes NVML lists on each GPU (or why it could not list them), and the host processes the
  // case's neighbours name (measure/memory_holders.h).
  std::map<unsigned, std::vector<OtherProcess>> gpu_others;
  std::map<unsigned, std::string> gpu_others_why_not;
  std::vector<OtherProcess> host_matches;

  // Keeps the lower of each value (a value one side lacks is taken from the other).
  void keep_lowest(const FreeMemory& other);
};

// MemAvailable of a /proc/meminfo text, in bytes; none when the line is absent or malformed.
std::optional<uint64_t> mem_available_bytes(std::string_view meminfo);

// What to read beside the memory: the processes other than the runtime's group `runtime_pgid` (0:
// none are read) and the host processes whose command holds one of `host_needles`.
struct BesideRuntime {
  pid_t runtime_pgid = 0;
  std::vector<std::string> host_needles;
};

// One reading now: the host, and every GPU `nvml` sees (an Error there leaves the GPUs out, with why).
FreeMemory read_free_memory(const Result<Nvml>& nvml, const BesideRuntime& beside = {});

}  // namespace fp
