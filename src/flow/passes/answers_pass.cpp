#include "flow/passes/answers_pass.h"

#include <algorithm>
#include <filesystem>

#include "client/http_client.h"
#include "flow/passes/prompt_tokens.h"
#include "flow/passes/request_builder.h"
#include "runtime/launcher.h"
#include "util/text.h"

namespace fp {

Result<AnswersPass> run_answers_pass(const CaseContext& ctx, const LaunchPlacement& at, const std::vector<std::string>& prompt_ids) {
  const Case& c = ctx.c;
  if (!ctx.adapter.token_probabilities)
    return make_error(ctx.adapter.data_file +
                      ": adapter.token_probabilities is missing: the runtime data names no way to ask for token probabilities");
  const TokenProbabilityKeys& keys = *ctx.adapter.token_probabilities;
  const TokenProbabilityEndpoint& endpoint = c.job == Job::Completion ? keys.completion : keys.chat;
  AnswersPass out;
  out.log_path = at.out_dir + "/answers-pass.log";
  const std::string bodies = at.out_dir + "/answers-pass";
  std::error_code ec;
  std::filesystem::create_directories(bodies, ec);
  if (ec) return make_error(bodies + ": cannot create the answers pass's folder: " + ec.message());
  FP_TRY(int port, free_loopback_port());
  out.argv = expand_argv(c, ctx.runtime, ctx.model_path, port, at.flag_value, timed_launch_args(ctx, at));
  LaunchSpec spec{out.argv, launch_env(ctx, at), out.log_path, port, c.plan.ready_timeout_s, at.cgroup_procs, at.runtime_cpus};
  FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
  out.argv = server.argv;
  auto fitted = fit_case_prompts(ctx, server.base_url);
  if (!fitted) {
    server.process.stop(5.0);
    return fitted.error();
  }
  for (const auto& id : prompt_ids) {
    auto p = std::find_if(fitted->prompts.begin(), fitted->prompts.end(), [&](const Prompt& q) { return q.id == id; });
    if (p == fitted->prompts.end()) {
      out.errors.push_back("prompt " + quote(id) + ": not among the case's prompts");
      continue;
    }
    const StreamRequest r = build_answers_request(ctx, server.base_url, *p, c.shape.max_output_tokens, c.plan.timeout_s);
    const std::string where = "answers pass, prompt " + quote(id) + " (" + r.url + ")";
    auto response = http_post_json(r.url, r.body, r.timeout_s, r.max_bytes, r.headers);
    if (!response) {
      out.errors.push_back(where + ": " + response.error().message);
      break;  // a server that failed one would fail the others
    }
    (void)write_file_atomic(bodies + "/" + id + ".json", response->body);
    if (response->status != 200) {
      out.errors.push_back(where + ": HTTP " + std::to_string(response->status) + ": " + response->body.substr(0, 200));
      continue;
    }
    auto answer = read_token_probabilities(response->body, endpoint, keys, where);
    if (!answer)
      out.errors.push_back(answer.error().message);
    else
      out.answers[id] = std::move(*answer);
  }
  server.process.stop(5.0);
  return out;
}

}  // namespace fp
