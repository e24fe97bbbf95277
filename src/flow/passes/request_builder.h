// The streamed request a job sends for one prompt: endpoint, headers and JSON body.
#pragma once

#include <string>

#include "case/prompt_set.h"
#include "client/stream_client.h"
#include "flow/passes/case_context.h"

namespace fp {

// chat, extraction and batch use the chat endpoint with the prompt's turns; completion sends the
// prompt as text to the completions endpoint. Temperature 0 and the case's seed, always; the
// "model" field names the model the server answers to (ctx.served_model), and the context's
// request headers (an attached server's API key) go with it. A case with shape.output_tokens adds
// the runtime data's exact_output fields (ignore_eos).
StreamRequest build_request(const CaseContext& ctx, const std::string& base_url, const Prompt& prompt, int max_tokens,
                            double timeout_s);

// A decode probe: the same request with the runtime data's decode_probe fields merged over it (the
// prompt from the runtime's prompt cache). Only for a runtime whose data has them.
StreamRequest build_decode_probe(const CaseContext& ctx, const std::string& base_url, const Prompt& prompt, int max_tokens,
                                 double timeout_s);

// An answers-pass request (flow/passes/answers_pass.h): the same request, not streamed, with the
// runtime data's token_probabilities fields for the job's endpoint merged over it, so that the answer
// comes back with its tokens' log-probabilities. Only for a runtime whose data has them; never a
// timed request.
StreamRequest build_answers_request(const CaseContext& ctx, const std::string& base_url, const Prompt& prompt, int max_tokens,
                                    double timeout_s);

}  // namespace fp
