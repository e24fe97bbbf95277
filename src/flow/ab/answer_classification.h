// Why two arms' answers to one prompt differ, from evidence measured in the same A/B run: the answers
// pass of each arm (flow/passes/answers_pass.h) returns every token's log-probability and its top
// candidates. At the first token the arms chose differently, each arm's margin is how far below its
// own choice it put the other arm's token. The bound comes from the run itself: the arms'
// disagreement, the largest change in log-probability of the same token between the arms at the
// positions before, where both chose alike (the token chosen and every candidate both list), times
// kNearTieFactor. A margin within the bound is a near-tie the flag's other summation order flips
// (expected for a random-weight model, whose next-token distribution is nearly flat); beyond it, not
// expected. Never a guess: without probabilities, or without a position to measure the disagreement
// on, the difference is unclassified, and why.
#pragma once

#include <string>

#include "result/ab_run.h"
#include "runtime/token_probabilities.h"

namespace fp {

// Two tokens' log-probabilities each moved by at most the disagreement d, so their gap moves by at
// most 2d and a flip needs each arm's margin within 2d; twice that again because the position of the
// flip itself is not among those measured (the disagreement grows with the sequence, and the
// agreeing prefix may be short).
inline constexpr double kNearTieFactor = 4.0;

// The answers pass's answers of one prompt, flag off and on, against the timed launches' answers
// (which they must reproduce for the classification to be about the same difference).
AnswerDifference classify_answer_difference(const std::string& timed_off, const std::string& timed_on, const AnswerWithProbabilities& off,
                                            const AnswerWithProbabilities& on);

}  // namespace fp
