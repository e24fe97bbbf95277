// The mechanism a case states before the A/B run ("prompt processing faster at long context,
// decode unchanged, KV memory unchanged in f16"), checked against what the A/B run measured.
//
// Relative changes are (on - off) / |off| in the figure's own unit. `faster` and `slower` follow
// the figure's direction (faster ttft_ms is lower, faster prompt_tokens_per_s is higher);
// `higher` and `lower` are about the raw value (memory). Outcomes:
//   directional: confirmed (a difference, the stated way, at least `at_least`), smaller than stated
//                (the stated way but less), contradicted (a difference the other way), not shown
//                (within noise; with the repetitions it would need);
//   unchanged:   confirmed (the whole confidence interval within +-tolerance, or a difference no
//                larger than it), not shown (within noise, but the interval allows more than the
//                tolerance), contradicted (a difference larger than the tolerance).
#pragma once

#include <string>
#include <vector>

#include "case/case_file.h"
#include "report/ab_report.h"

namespace fp {

// Which way the figure moved with the flag on.
AbEffect effect_of(const AbResult& cmp, bool lower_is_better);

struct MechanismOutcome {
  std::vector<MechanismCheck> checks;     // one per statement, in the case's order
  std::vector<std::string> unpredicted;   // "itl_ms: -12.3% [CI ...] (no statement about it)", figure order
};

// Figures named in `not_system` (the harness's own figures) never count as unpredicted.
MechanismOutcome check_mechanism(const std::vector<MechanismStatement>& statements,
                                 const std::vector<AbFigure>& figures,
                                 const std::vector<std::string>& not_system = {"client_minus_server_prompt_ms"});

}  // namespace fp
