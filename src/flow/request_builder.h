// The streamed request a job sends for one prompt: endpoint and JSON body.
#pragma once

#include <string>

#include "case/case_file.h"
#include "case/prompt_set.h"
#include "client/stream_client.h"
#include "runtime/adapter.h"

namespace fp {

// chat, extraction and batch use the chat endpoint with the prompt's turns; completion sends the
// prompt as text to the completions endpoint. Temperature 0 and the case's seed, always. A case
// with shape.output_tokens adds the runtime data's exact_output fields (ignore_eos).
StreamRequest build_request(const Case& c, const Adapter& adapter, const std::string& base_url, const Prompt& prompt,
                            int max_tokens, double timeout_s);

}  // namespace fp
