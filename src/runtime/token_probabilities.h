// The log-probabilities of an answer's tokens and of their top candidates, as a runtime returns them
// when asked ("token_probabilities" in the adapter part of src/runtime/data/<runtime>.json): what to
// add to a request, where the answer's text and its tokens sit in the (non-streamed) response, and
// the names of a token's fields. Only the A/B answers pass asks for them (flow/passes/answers_pass.h);
// the timed requests never do. No key is spelled in C++.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/json_fields.h"
#include "util/result.h"

namespace fp {

// One endpoint's way (the chat endpoint's, the completions endpoint's).
struct TokenProbabilityEndpoint {
  nlohmann::json request = nlohmann::json::object();  // merged into the request body, e.g. {"logprobs": true, "top_logprobs": 10}
  std::string text;                                   // JSON pointer to the answer's text, e.g. /choices/0/message/content
  std::string tokens;                                 // JSON pointer to the array of tokens, e.g. /choices/0/logprobs/content
};

struct TokenProbabilityKeys {
  TokenProbabilityEndpoint chat, completion;
  // A token's fields: its id (may be empty: the runtime names none), its text, its log-probability
  // (natural log) and the array of its top candidates (each with the same fields but candidates).
  std::string id, text, logprob, candidates;
};

// The adapter's "token_probabilities" object; errors name the file, the field and what is valid.
Result<TokenProbabilityKeys> load_token_probability_keys(const JsonFields& adapter);

struct TokenCandidate {
  std::optional<long long> id;
  std::string text;
  double logprob = 0;  // natural log
};

// One generated token: the one chosen, and the top candidates at its position (the chosen first
// where the sampling was greedy).
struct AnsweredToken {
  TokenCandidate chosen;
  std::vector<TokenCandidate> candidates;
};

struct AnswerWithProbabilities {
  std::string text;
  std::vector<AnsweredToken> tokens;  // empty: the runtime returned no token probabilities
};

// Reads one non-streamed response body. The text must be there; the tokens may be absent or null
// (then none were returned). Errors name `where` (the request), the field's pointer and the value.
Result<AnswerWithProbabilities> read_token_probabilities(const std::string& body, const TokenProbabilityEndpoint& endpoint,
                                                         const TokenProbabilityKeys& keys, const std::string& where);

}  // namespace fp
