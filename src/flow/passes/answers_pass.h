// The answers pass: one more launch of the timed configuration (its args, the case's env; nothing
// verbose), the given prompts once each, one request at a time, each asking the runtime for its
// tokens' log-probabilities and top candidates (the runtime data's token_probabilities,
// runtime/token_probabilities.h). A/B runs it per arm only when answers differ between the arms, to
// classify the difference (flow/ab/answer_classification.h); the timed requests never ask for
// probabilities, so asking cannot alter what is timed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flow/passes/case_context.h"
#include "runtime/token_probabilities.h"

namespace fp {

struct AnswersPass {
  std::vector<std::string> argv;
  std::string log_path;
  std::map<std::string, AnswerWithProbabilities> answers;  // prompt id -> its answer and tokens
  std::vector<std::string> errors;                         // a request that failed, naming the prompt
};

// Launches, sends the prompts named in `prompt_ids` (the context's fitted prompts), stops. The
// response bodies are kept as <at.out_dir>/answers-pass/<prompt>.json. An error when the runtime
// data names no way to ask (adapter.token_probabilities) or the launch fails.
Result<AnswersPass> run_answers_pass(const CaseContext& ctx, const LaunchPlacement& at, const std::vector<std::string>& prompt_ids);

}  // namespace fp
