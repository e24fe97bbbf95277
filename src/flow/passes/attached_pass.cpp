#include "flow/passes/attached_pass.h"

#include <chrono>
#include <thread>

#include "client/http_client.h"
#include "client/openai_chunk.h"
#include "flow/passes/prompt_tokens.h"
#include "runtime/attached_data.h"
#include "runtime/log_follower.h"
#include "runtime/process.h"
#include "util/text.h"
#include "util/regex.h"

namespace fp {
namespace {

using Clock = std::chrono::steady_clock;

// Why each level may be missing here: the runtime data's attached hints, or no log at all.
std::map<std::string, std::string> attached_hints(const CaseContext& ctx, bool has_log) {
  std::map<std::string, std::string> hints;
  if (!has_log) {
    for (const auto& level : evidence_level_names())
      hints[level] = "attached without a log: the case names no log_file or log_command (flashproof new-case --log FILE "
                     "or --log-command CMD...)";
  } else if (auto data = load_attached_data(ctx.c.runtime)) {
    for (const auto& [level, why] : data->hints) hints[level] = "attached: " + why;
  }
  if (!hints.count("kernels"))
    hints["kernels"] = "attached: flashproof did not start the server, so it cannot preload the kernel probe into it";
  return hints;
}

}  // namespace

Status wait_attached_ready(const CaseContext& ctx) {
  const auto t0 = Clock::now();
  const double limit = ctx.c.plan.ready_timeout_s;
  std::string last;
  for (;;) {
    bool ready = true;
    for (const auto& path : ctx.adapter.ready_paths) {
      const std::string url = ctx.c.attach->endpoint + path;
      auto r = http_get(url, 5.0, 1 << 20, ctx.request_headers);
      if (r && r->status == 200) continue;
      ready = false;
      if (r && r->status != 503)
        return make_error("the attached server is not usable: GET " + url + ": " + http_error_text(r->status, r->body));
      last = "GET " + url + ": " + (r ? http_error_text(r->status, r->body) : r.error().message);
      break;
    }
    if (ready) return ok_status();
    if (interrupted()) return make_error("interrupted while waiting for the attached server");
    if (std::chrono::duration<double>(Clock::now() - t0).count() > limit)
      return make_error("the attached server was not ready within " + std::to_string(static_cast<int>(limit)) +
                        " s (plan.ready_timeout_s); last check " + last);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

Result<EvidenceOutcome> run_attached_evidence_pass(const CaseContext& ctx, const LaunchPlacement& place) {
  const auto t0 = Clock::now();
  const Attach& at = *ctx.c.attach;
  EvidenceOutcome out;
  out.probe.why_not = "attached: flashproof did not start the server, so it cannot preload the kernel probe into it";
  std::unique_ptr<LogFollower> follower;
  if (!at.log_file.empty()) {
    FP_TRY(follower, LogFollower::follow_file(at.log_file));
  } else if (!at.log_command.empty()) {
    FP_TRY(follower, LogFollower::follow_command(at.log_command, place.out_dir + "/log-command.out"));
  }
  FP_TRY_STATUS(wait_attached_ready(ctx));
  // The job's load at the prompts' asked token length, as for a launched server (flow/passes/evidence_pass.h).
  FP_TRY(out.prompts, fit_case_prompts(ctx, at.endpoint));
  CaseContext fitted_ctx = ctx;
  adopt_fitted_prompts(fitted_ctx, out.prompts);
  out.load = job_load_text(fitted_ctx, place);
  auto answer = send_job_load(fitted_ctx, place, at.endpoint);
  if (!answer)
    return make_error("the request to the attached server failed (" + out.load + "): " + answer.error().message);
  out.answer_fingerprint = answer->system_fingerprint;
  if (follower) {
    out.log_path = place.out_dir + "/evidence.log";
    FP_TRY(size_t bytes, follower->finish(out.log_path));
    out.log_source = follower->source();
    out.notes = follower->notes();
    out.notes.push_back("read " + std::to_string(bytes) + " bytes of the " + out.log_source +
                        " written from the run's start through the evidence requests");
    FP_TRY(out.log, analyse_log(out.log_path, ctx.signatures));
  }
  VerdictInput in = case_verdict_input(ctx, out, false);
  if (ctx.c.expect.evidence.empty()) in.required.clear();  // the log window decides; alone it never proves "active"
  in.hints = attached_hints(ctx, follower != nullptr);
  out.verdict = decide(in);
  explain_causes(ctx, out);
  out.signals = cheap_signals(out.log.scan);
  out.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

Fingerprint attached_fingerprint(const Case& c) {
  Fingerprint f = machine_fingerprint();
  f.runtime = c.runtime;
  f.runtime_version = "attached";
  f.launch = "attached " + c.attach->endpoint;
  return f;
}

std::string attached_build(const std::string& runtime, const std::string& system_fingerprint) {
  auto data = load_attached_data(runtime);
  if (!data || data->build_from_system_fingerprint.empty()) return "";
  auto re = Regex::compile(data->build_from_system_fingerprint);  // validated when the data was read
  RegexMatch m;
  if (re && regex_search(system_fingerprint, *re, m) && m[1].matched) return m.str(1);
  return "";
}

}  // namespace fp
