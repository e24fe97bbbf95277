// The words of an A/B answer difference's classification (result/ab_run.h AnswerDifference), one
// wording for ab.txt, ab.json and the same-system statement.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "result/ab_run.h"

namespace fp {

// "expected", "not expected", "unclassified" (ab.json's kind).
const char* to_string(AnswerDifferenceKind k);

// The line: "expected: a near-tie at token 70 (margin 0.00076 nats), the flag changes the summation
// order (bound 0.0125 nats: 4 x 0.00313, ...)", "not expected: ...", "unclassified: the runtime
// returned no token probabilities", ...
std::string answer_difference_text(const AnswerDifference& d);

// "token 70 (flag off \" list\", flag on \",\")", or "not known (why)" without tokens.
std::string first_token_text(const AnswerDifference& d);

// ab.json's "difference" of a prompt: kind, line, first_token, the tokens, margin, bound and what
// the bound is made of (null where not measured).
nlohmann::ordered_json answer_difference_json(const AnswerDifference& d);

}  // namespace fp
