// The answers that differ between the arms of an A/B run, classified: where any differ, one answers
// pass per arm (flow/passes/answers_pass.h) for those prompts only, then each difference from the
// two passes' token log-probabilities (flow/ab/answer_classification.h). No difference, no launch.
#pragma once

#include "flow/passes/case_context.h"
#include "result/ab_run.h"

namespace fp {

// Fills AbAnswerDiff::difference of r.answers that are not identical, and AbArm::answers_pass of
// both arms. `off` and `on` are the arms' contexts (the case, its prompts fitted by the arm's evidence
// pass), `off_at` and `on_at` their placements (flag value, folder).
void classify_answer_differences(const CaseContext& off, const LaunchPlacement& off_at, const CaseContext& on, const LaunchPlacement& on_at,
                                 AbRun& r, bool quiet);

}  // namespace fp
