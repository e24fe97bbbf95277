// Counting a prompt's tokens as the runtime will count them for the request: through its tokenizer
// endpoint (runtime/adapter.h TokenizerEndpoint, from the runtime data), or, where the runtime data
// names none, an estimate that the result states as one.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "case/prompt_set.h"
#include "runtime/adapter.h"
#include "util/result.h"

namespace fp {

// The estimate where no tokenizer endpoint is known: OpenAI's rule of thumb for English text.
inline constexpr double kCharsPerTokenEstimate = 4.0;

// The request's prompt tokens, `chat` for the chat endpoint (turns through the chat template), else
// the prompt as one text (the completions endpoint). Errors name the endpoint, the HTTP status and
// the server's message. `headers`: extra request headers (an attached server's API key).
Result<int> count_prompt_tokens(const TokenizerEndpoint& e, const std::string& base_url, const Prompt& p, bool chat,
                                double timeout_s, const std::vector<std::string>& headers = {});

// The estimate: every message's characters / kCharsPerTokenEstimate, rounded up.
int estimate_prompt_tokens(const Prompt& p);

// How the counts were made, in words for the result: "llama-server POST /tokenize (chat turns
// rendered by POST /apply-template)" or "estimated at 4 characters per token: the runtime data of
// RUNTIME names no tokenizer endpoint".
std::string token_count_method(const Adapter& a, bool chat);

// The pieces, exposed for tests: the JSON body asking to tokenize `text`; the count in an answer.
nlohmann::json tokenize_text_body(const TokenizerEndpoint& e, const std::string& text);
nlohmann::json tokenize_chat_body(const TokenizerEndpoint& e, const Prompt& p);
Result<int> count_in_answer(const TokenizerEndpoint& e, const nlohmann::json& answer, const std::string& url);

}  // namespace fp
