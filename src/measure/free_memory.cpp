#include "measure/free_memory.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "measure/memory_holders.h"

namespace fp {

void FreeMemory::keep_lowest(const FreeMemory& o) {
  if (o.host_available_bytes) {
    if (!host_available_bytes || *o.host_available_bytes <= *host_available_bytes) host_matches = o.host_matches;
    host_available_bytes = host_available_bytes ? std::min(*host_available_bytes, *o.host_available_bytes) : *o.host_available_bytes;
  }
  for (const auto& [gpu, bytes] : o.gpu_free_bytes) {
    auto it = gpu_free_bytes.find(gpu);
    if (it == gpu_free_bytes.end() || bytes <= it->second) {  // the processes of the lowest reading
      gpu_others.erase(gpu);
      gpu_others_why_not.erase(gpu);
      if (auto p = o.gpu_others.find(gpu); p != o.gpu_others.end()) gpu_others[gpu] = p->second;
      if (auto w = o.gpu_others_why_not.find(gpu); w != o.gpu_others_why_not.end()) gpu_others_why_not[gpu] = w->second;
    }
    gpu_free_bytes[gpu] = it == gpu_free_bytes.end() ? bytes : std::min(it->second, bytes);
  }
  for (const auto& [gpu, name] : o.gpu_names) gpu_names[gpu] = name;
  if (gpu_free_bytes.empty() && gpu_why_not.empty()) gpu_why_not = o.gpu_why_not;
  if (!gpu_free_bytes.empty()) gpu_why_not.clear();
  readings += o.readings;
}

std::optional<uint64_t> mem_available_bytes(std::string_view meminfo) {
  std::istringstream in{std::string(meminfo)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    unsigned long long kib = 0;
    std::string unit;
    if (!(fields >> kib >> unit) || unit != "kB") return std::nullopt;
    return static_cast<uint64_t>(kib) * 1024u;
  }
  return std::nullopt;
}

FreeMemory read_free_memory(const Result<Nvml>& nvml, const BesideRuntime& beside) {
  FreeMemory f;
  f.readings = 1;
  std::ifstream in("/proc/meminfo");
  std::stringstream text;
  text << in.rdbuf();
  f.host_available_bytes = mem_available_bytes(text.str());
  f.host_matches = host_processes_matching(beside.host_needles, beside.runtime_pgid);
  if (!nvml) {
    f.gpu_why_not = nvml_reason(nvml.error());
    return f;
  }
  auto gpus = nvml->gpus();
  if (!gpus) {
    f.gpu_why_not = gpus.error().message;
    return f;
  }
  for (const auto& g : *gpus) {
    f.gpu_free_bytes[g.index] = g.memory_free_bytes;
    f.gpu_names[g.index] = g.name;
    if (beside.runtime_pgid <= 0) continue;
    if (auto others = other_gpu_processes(*nvml, g.index, beside.runtime_pgid)) f.gpu_others[g.index] = *others;
    else f.gpu_others_why_not[g.index] = others.error().message;
  }
  if (gpus->empty()) f.gpu_why_not = "NVML lists no GPU";
  return f;
}

}  // namespace fp
