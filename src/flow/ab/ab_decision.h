// The A/B decision: from the paired comparison of the job's gated figures (flow/paired/paired_runner.h,
// arm A = flag off, arm B = flag on), the answers and the evidence of both arms, whether the run
// passes, and whether the faster system is still the same system.
#pragma once

#include <vector>

#include "case/case_file.h"
#include "measure/paired_stats.h"
#include "report/ab_report.h"

namespace fp {

// Fills gates, same_system, failures, complete, exit_code and decision of `r`.
//   gate outcomes: pass (no regression with the flag on), fail (regression), undecided (unresolved
//   within the budget: exit 3 unless something else failed);
//   exit 0 pass, 1 fail (a gate, the evidence, an answer of an extraction job), 2 incomplete (a
//   launch failed, a gate figure not measured), 3 a gate unresolved.
//   A server that stopped answering in an arm's sustained phase (AbArm::sustained_stop) is a finding
//   in `findings`, never "incomplete": with the flag off it is quoted beside the decision the figures
//   make; with the flag on it is also a failure (the flag's configuration stopped serving).
//   Answers that differ are said with their classification (AbAnswerDiff::difference): all near-ties
//   within the arms' measured disagreement, "the same system but for rounding"; any not expected, a
//   finding (quoted in the decision) and "a different system"; unclassified, "a different system"
//   as before. The extraction job's answers gate fails on any difference, expected or not: its
//   contract is the exact answer. No other job gates on answers.
void decide_ab(Job job, const std::vector<FigureDecision>& paired, AbRun& r);

}  // namespace fp
