#include "flow/evidence_pass.h"

#include <chrono>
#include <filesystem>

#include "client/stream_client.h"
#include "flow/gpu_probe.h"
#include "flow/request_builder.h"
#include "util/text.h"

namespace fp {

Result<LogAnalysis> analyse_log(const std::string& path, const RuntimeSignatures& sigs) {
  FP_TRY(std::string text, read_file(path));
  auto records = split_records(text, sigs);
  LogAnalysis a;
  a.scan = scan_log(records, sigs);
  a.placement = scan_placement(records, sigs);
  return a;
}

StreamRequest evidence_request(const CaseContext& ctx, const std::string& base_url) {
  // Few tokens: the op placement and the kernels are decided by the shape, not by the answer's length.
  const int tokens = std::min(ctx.c.shape.max_output_tokens, 4);
  return build_request(ctx.c, ctx.adapter, base_url, ctx.prompts.front(), tokens, ctx.c.plan.timeout_s);
}

Result<EvidenceOutcome> run_evidence_pass(const CaseContext& ctx) {
  auto t0 = std::chrono::steady_clock::now();
  EvidenceOutcome out;
  out.log_path = ctx.out_dir + "/evidence.log";
  out.env = ctx.c.launch.env;
  for (const auto& [k, v] : ctx.adapter.evidence_env) out.env[k] = v;
  out.probe = plan_gpu_probe(ctx.out_dir + "/kernels.tsv");
  const GpuProbePlan& probe = out.probe;
  for (const auto& [k, v] : probe.env) out.env[k] = v;

  FP_TRY(int port, free_loopback_port());
  out.argv = expand_argv(ctx.c, ctx.runtime, ctx.model_path, port, ctx.flag_value, ctx.adapter.evidence_args);
  LaunchSpec spec{out.argv, out.env, out.log_path, port, ctx.c.plan.ready_timeout_s};
  FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
  out.argv = server.argv;
  auto answer = stream_request(evidence_request(ctx, server.base_url));
  server.process.stop(5.0);
  if (!answer)
    return make_error("evidence pass: the request failed: " + answer.error().message + "\nlog " + out.log_path +
                      " ends:\n" + log_tail(out.log_path));

  FP_TRY(out.log, analyse_log(out.log_path, ctx.signatures));
  if (probe.attached) {
    auto tally = read_kernel_tally(probe.tally_path);
    if (tally) out.kernels = classify_kernels(*tally, ctx.signatures);
  }
  VerdictInput in;
  in.log = &out.log.scan;
  in.placement = &out.log.placement;
  in.kernels = out.kernels ? &*out.kernels : nullptr;
  in.expect_backend = ctx.c.expect.backend;
  in.hints = ctx.signatures.hints;
  if (!probe.attached) in.hints["kernels"] = probe.why_not;
  out.verdict = decide(in);
  out.signals = cheap_signals(out.log.scan);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fp
