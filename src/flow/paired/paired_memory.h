// Memory in the side-by-side gate: each timed launch's memory figures (flow/passes/memory_figures.h), the
// baseline's median over its launches against the candidate's, judged by the memory policy
// (golden/memory_policy.h) as in every other mode: a growth beyond the tolerance fails the case, a
// drop is reported, a KV cache that moved between devices fails in its own words. Memory is nearly
// deterministic, so no paired statistics: the medians decide.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flow/paired/paired_runner.h"
#include "golden/memory_policy.h"

namespace fp {

struct PairedMemory {
  std::vector<MemoryJudgement> judgements;  // one per memory figure both arms measured, by name
  std::vector<std::string> figures;         // their names, same order
  std::vector<std::string> only_one_arm;    // figures one arm measured and the other did not
  std::optional<std::string> kv_moved;      // "KV CACHE MOVED: ..."
  // The lines that fail the case: "MEMORY <judgement>" per growth, the KV move.
  std::vector<std::string> failures() const;
};

// The memory of the outcome's launches (ArmLaunch::memory), arm A as before, arm B as after.
PairedMemory compare_paired_memory(const PairedOutcome& o);

}  // namespace fp
