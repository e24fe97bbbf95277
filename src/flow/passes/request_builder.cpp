#include "flow/passes/request_builder.h"

#include <nlohmann/json.hpp>

namespace fp {

StreamRequest build_request(const CaseContext& ctx, const std::string& base_url, const Prompt& prompt, int max_tokens,
                            double timeout_s) {
  const Case& c = ctx.c;
  const Adapter& adapter = ctx.adapter;
  nlohmann::json body = adapter.request_extras;
  if (c.shape.exact_output) body.update(adapter.exact_output);  // shape.output_tokens: every answer max_tokens long
  // shape.prompt_cache: a repeated prompt prefix served from the runtime's prompt cache, as the
  // deployment's clients let it (the runtime data's way to ask for it is its decode probe's).
  if (c.shape.prompt_cache && adapter.decode_probe) body.update(*adapter.decode_probe);
  if (!ctx.served_model.empty()) body["model"] = ctx.served_model;
  const bool completion = c.job == Job::Completion;
  if (completion) {
    body["prompt"] = prompt.as_text();
  } else {
    body["messages"] = nlohmann::json::array();
    for (const auto& m : prompt.messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  }
  body["max_tokens"] = max_tokens;
  body["temperature"] = 0;
  body["seed"] = c.seed;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  StreamRequest r;
  r.url = base_url + (completion ? adapter.completion_path : adapter.chat_path);
  r.body = body.dump();
  r.timeout_s = timeout_s;
  r.stall_timeout_s = std::min(timeout_s, c.plan.stall_timeout_s);
  r.headers = ctx.request_headers;
  r.timing_keys = adapter.server_timing_keys;
  return r;
}

StreamRequest build_decode_probe(const CaseContext& ctx, const std::string& base_url, const Prompt& prompt, int max_tokens,
                                 double timeout_s) {
  StreamRequest r = build_request(ctx, base_url, prompt, max_tokens, timeout_s);
  if (ctx.adapter.decode_probe) {
    nlohmann::json body = nlohmann::json::parse(r.body);
    body.update(*ctx.adapter.decode_probe);
    r.body = body.dump();
  }
  return r;
}

StreamRequest build_answers_request(const CaseContext& ctx, const std::string& base_url, const Prompt& prompt, int max_tokens,
                                    double timeout_s) {
  StreamRequest r = build_request(ctx, base_url, prompt, max_tokens, timeout_s);
  if (!ctx.adapter.token_probabilities) return r;
  const TokenProbabilityKeys& keys = *ctx.adapter.token_probabilities;
  nlohmann::json body = nlohmann::json::parse(r.body);
  body["stream"] = false;
  body.erase("stream_options");
  body.update(ctx.c.job == Job::Completion ? keys.completion.request : keys.chat.request);
  r.body = body.dump();
  return r;
}

}  // namespace fp
