// Re-judging a recorded side-by-side gate run (its gate.json) with this build's statistics, look by
// look through the gate's one loop (flow/paired/sequential_loop.h: the scheduled looks, the budget in
// blocks), without launching anything:
// how a change to measure/paired_stats.h decides on real launches (bench/gate_replay,
// bench/README.md section 3).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flow/paired/paired_runner.h"
#include "util/result.h"

namespace fp {

struct GateReplay {
  int recorded_blocks = 0;
  int blocks = 0;                     // the blocks of the last look
  std::string outcome;                // "decided", "regression", "unresolved: ..."
  std::vector<FigureDecision> decisions;  // the gated figures at the last look
  std::vector<FigureDecision> guards;     // the guards at the last look
  std::vector<std::string> looks;     // one line per look and gated figure or guard
};

// The gated figures, the guards and their minimum effects (floors already relative) are the
// run's; `extra_guards` (figure -> relative effect) adds guards, e.g. itl_requests_ms for a run
// recorded before the gate guarded it (a launch's itl_requests_ms field is its unit then). A guard's
// regression is the replay's "regression", as in the gate.
Result<GateReplay> replay_gate(const nlohmann::json& gate_json, const std::map<std::string, double>& extra_guards = {});

}  // namespace fp
