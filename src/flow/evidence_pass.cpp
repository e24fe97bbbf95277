#include "flow/evidence_pass.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "client/stream_client.h"
#include "evidence/device_timings.h"
#include "flow/attached_pass.h"
#include "flow/gpu_probe.h"
#include "flow/request_builder.h"
#include "util/text.h"

namespace fp {

Result<LogAnalysis> analyse_log(const std::string& path, const RuntimeSignatures& sigs) {
  FP_TRY(std::string text, read_file(path));
  LogAnalysis a;
  a.records = split_records(text, sigs);
  a.scan = scan_log(a.records, sigs);
  a.placement = scan_placement(a.records, sigs);
  if (sigs.device_timings) a.device_timings = device_timing_tally(text, *sigs.device_timings, path);
  return a;
}

namespace {

// What the harness knows before reading the launch line and the log: the model's header and the expectation.
Facts model_facts_known(const CaseContext& ctx) {
  Facts f;
  f["expected_backend"] = ctx.c.expect.backend;
  if (!ctx.runtime_build.empty()) f["build"] = ctx.runtime_build;
  if (ctx.model) {
    f["head_size"] = std::to_string(ctx.model->head_size_k);
    f["layers"] = std::to_string(ctx.model->layers);
  }
  return f;
}

}  // namespace

int job_load_streams(const CaseContext& ctx) {
  if (ctx.load_streams > 0) return ctx.load_streams;
  if (ctx.c.job == Job::Batch) return std::max<int>(1, static_cast<int>(ctx.prompts.size()));
  return 1;
}

std::string job_load_text(const CaseContext& ctx) {
  const int n = job_load_streams(ctx);
  if (n == 1) return "one request";
  return std::to_string(n) + " requests at once (" +
         (ctx.load_streams > 0 ? std::string("the sustained phase's concurrency") : std::string("the batch job's round")) + ")";
}

std::vector<StreamRequest> evidence_requests(const CaseContext& ctx, const std::string& base_url) {
  // Few tokens: the op placement and the kernels are decided by the shape, not by the answer's length.
  const int tokens = std::min(ctx.c.shape.max_output_tokens, 4);
  std::vector<StreamRequest> out;
  const int n = job_load_streams(ctx);
  for (int i = 0; i < n && !ctx.prompts.empty(); ++i)
    out.push_back(build_request(ctx, base_url, ctx.prompts[static_cast<size_t>(i) % ctx.prompts.size()], tokens,
                                ctx.c.plan.timeout_s));
  return out;
}

Result<LoadAnswers> send_job_load(const CaseContext& ctx, const std::string& base_url) {
  const std::vector<StreamRequest> reqs = evidence_requests(ctx, base_url);
  if (reqs.empty()) return make_error("the case has no prompts to send");
  std::vector<Result<StreamResult>> answers;
  if (reqs.size() == 1) answers.push_back(stream_request(reqs.front()));
  else answers = stream_concurrent(reqs, static_cast<int>(reqs.size()));
  LoadAnswers out;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i])
      return make_error((answers.size() > 1 ? "request " + std::to_string(i + 1) + " of " + std::to_string(answers.size()) + ": " : "") +
                        answers[i].error().message);
    out.prompt_tokens += std::max(0, answers[i]->prompt_tokens);
    out.completion_tokens += std::max(0, answers[i]->completion_tokens);
    if (out.system_fingerprint.empty()) out.system_fingerprint = answers[i]->system_fingerprint;
  }
  return out;
}

VerdictInput case_verdict_input(const CaseContext& ctx, const EvidenceOutcome& out, bool gpu_case_probed) {
  VerdictInput in = verdict_input(ctx.signatures);
  in.log = out.log_source.empty() && ctx.c.attach ? nullptr : &out.log.scan;
  in.placement = in.log ? &out.log.placement : nullptr;
  in.kernels = out.kernels ? &*out.kernels : nullptr;
  in.expect_backend = ctx.c.expect.backend;
  in.gpu_backends = ctx.gpu_backends;
  in.required = ctx.c.expect.evidence.empty() ? default_evidence_levels(ctx.signatures, gpu_case_probed)
                                              : ctx.c.expect.evidence;
  if (ctx.model) {
    in.model_layers = ctx.model->layers;
    in.layers_from = ctx.model->source + " (" + ctx.model->architecture + ".block_count)";
  }
  return in;
}

void explain_causes(const CaseContext& ctx, EvidenceOutcome& out) {
  if (!ctx.c.expect.fused_attention || verdict_as_expected(out.verdict, true)) return;
  Facts known = model_facts_known(ctx);
  for (const auto& [k, v] : verdict_facts(out.verdict)) known[k] = v;
  out.facts = gather_facts(known, out.argv, out.log.records, ctx.signatures.causes);
  out.causes = match_causes(ctx.signatures.causes, out.facts, out.log.records);
  out.causes_line = causes_text(out.causes, out.facts);
}

Result<EvidenceOutcome> run_evidence_pass(const CaseContext& ctx) {
  if (ctx.c.attach) return run_attached_evidence_pass(ctx);
  auto t0 = std::chrono::steady_clock::now();
  EvidenceOutcome out;
  out.log_path = ctx.out_dir + "/evidence.log";
  out.env = ctx.c.launch.env;
  for (const auto& [k, v] : ctx.adapter.evidence_env) out.env[k] = v;
  out.probe = plan_gpu_probe(ctx.out_dir + "/kernels.tsv");  // one file per process, merged into this one
  const GpuProbePlan& probe = out.probe;
  for (const auto& [k, v] : probe.env) out.env[k] = v;
  // A backend the probe cannot see (Vulkan) that times its own ops: level 3 from those timings.
  const DeviceTimings* timings = ctx.signatures.device_timings &&
                                         timed_backend_expected(ctx.c.expect.backends, *ctx.signatures.device_timings)
                                     ? &*ctx.signatures.device_timings
                                     : nullptr;
  if (timings)
    for (const auto& [k, v] : timings->env) out.env[k] = v;

  FP_TRY(int port, free_loopback_port());
  out.argv = expand_argv(ctx.c, ctx.runtime, ctx.model_path, port, ctx.flag_value, ctx.adapter.evidence_args);
  LaunchSpec spec{out.argv, out.env, out.log_path, port, ctx.c.plan.ready_timeout_s};
  FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
  out.argv = server.argv;
  auto fitted = fit_case_prompts(ctx, server.base_url);
  if (!fitted) {
    server.process.stop(5.0);
    return make_error("evidence pass: " + fitted.error().message);
  }
  out.prompts = *fitted;
  // The load at the prompts' asked token length, as the timed runs and the probed check will send them.
  CaseContext fitted_ctx = ctx;
  adopt_fitted_prompts(fitted_ctx, out.prompts);
  out.load = job_load_text(fitted_ctx);
  auto answer = send_job_load(fitted_ctx, server.base_url);
  server.process.stop(5.0);
  if (!answer)
    return make_error("evidence pass (" + out.load + "): the request failed: " + answer.error().message + "\nlog " +
                      out.log_path + " ends:\n" + log_tail(out.log_path));

  FP_TRY(out.log, analyse_log(out.log_path, ctx.signatures));
  std::string no_tally_why;
  if (probe.attached) {
    auto tally = read_probe_tallies(probe);
    if (tally) out.kernels = classify_kernels(*tally, ctx.signatures);
    else no_tally_why = "the probe's tally is missing or unreadable (a missing file: the probe was not loaded, "
                        "CUDA_INJECTION64_PATH wrong or the runtime never initialised CUDA): " + tally.error().message;
  }
  std::string timings_why;
  if (timings && out.log.device_timings) {
    const KernelTally& t = *out.log.device_timings;
    if (t.kernels.empty()) timings_why = t.reason;
    else out.kernels = classify_kernels(t, ctx.signatures);
  }
  // Level 3 is a default requirement of a case that runs on the GPU (a GPU backend, or an attention
  // backend: vLLM) where the probe is attached, and of a case on a timed backend that printed its
  // timings; a CPU case on a GPU machine needs no kernels.
  const bool gpu_case = gpus_needed(ctx.c, ctx.signatures, ctx.gpu_box ? ctx.gpu_box->gpus : 1) > 0 ||
                        ctx.signatures.names_attention_backends();
  VerdictInput in = case_verdict_input(ctx, out, (probe.attached && gpu_case) || (timings && out.kernels));
  if (timings) in.gpu_backend_pattern = timings->backend.pattern;
  // A GPU box may not lose level 3: no probe, a probe not loaded or refused by CUPTI is no evidence.
  if (ctx.gpu_box && gpu_case && std::find(in.required.begin(), in.required.end(), "kernels") == in.required.end())
    in.required.push_back("kernels");
  if (!probe.attached) in.hints["kernels"] = probe.why_not;
  if (!no_tally_why.empty()) in.hints["kernels"] = no_tally_why;
  if (!timings_why.empty()) in.hints["kernels"] = timings_why;
  out.verdict = decide(in);
  explain_causes(ctx, out);
  out.signals = cheap_signals(out.log.scan);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fp
