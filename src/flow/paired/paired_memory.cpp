#include "flow/paired/paired_memory.h"

#include <map>

#include "flow/passes/memory_figures.h"
#include "measure/stats.h"

namespace fp {
namespace {

// Figure -> the median over the arm's launches.
std::map<std::string, double> arm_medians(const PairedOutcome& o, const std::string& arm) {
  std::vector<LaunchMemory> launches;
  for (const auto& l : o.launches)
    if (l.arm == arm && l.errors.empty() && l.memory) launches.push_back(*l.memory);
  std::map<std::string, double> out;
  for (const auto& f : memory_figures(launches)) out[f.name] = median(f.samples);
  return out;
}

}  // namespace

std::vector<std::string> PairedMemory::failures() const {
  std::vector<std::string> out;
  for (const auto& j : judgements)
    if (j.failed()) out.push_back("MEMORY " + j.message);
  if (kv_moved) out.push_back(*kv_moved);
  return out;
}

PairedMemory compare_paired_memory(const PairedOutcome& o) {
  PairedMemory m;
  const auto before = arm_medians(o, o.arm_a), after = arm_medians(o, o.arm_b);
  for (const auto& [name, b] : before) {
    auto it = after.find(name);
    if (it == after.end()) {
      m.only_one_arm.push_back(name + " (" + o.arm_a + " only)");
      continue;
    }
    m.figures.push_back(name);
    m.judgements.push_back(judge_memory(name, b, it->second));
  }
  for (const auto& [name, a] : after)
    if (!before.count(name)) m.only_one_arm.push_back(name + " (" + o.arm_b + " only)");
  m.kv_moved = kv_cache_moved(before, after);
  return m;
}

}  // namespace fp
