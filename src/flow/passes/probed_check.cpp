#include "flow/passes/probed_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <chrono>

#include "evidence/device_timings.h"
#include "flow/passes/gpu_probe.h"
#include "flow/passes/instrument_retry.h"
#include "flow/passes/instruments.h"
#include "flow/passes/low_noise_figures.h"
#include "flow/passes/prompt_tokens.h"
#include "util/text.h"
#include "util/utf8.h"

namespace fp {

namespace {

// The evidence pass's level 3 came from the backend's own op timings (ggml-vulkan's perf logger),
// not the probe: the check then times the timed configuration with that instrument instead.
const Instrument* device_timings_on(const EvidenceOutcome& ev) {
  return ev.probe.attached ? nullptr : find_instrument(ev.instruments_on, "device_timings");
}

// The timed configuration exactly (timed args, the case's env, the CPUs the timed launch had), plus
// the instrument's environment: nothing verbose.
Result<LaunchSpec> timed_launch_with(const CaseContext& ctx, const LaunchPlacement& at,
                                     const std::map<std::string, std::string>& instrument_env, const std::string& log_path) {
  FP_TRY(int port, free_loopback_port());
  LaunchSpec spec;
  spec.argv = expand_argv(ctx.c, ctx.runtime, ctx.model_path, port, at.flag_value, timed_launch_args(ctx, at));
  spec.env = launch_env(ctx, at);
  for (const auto& [k, v] : instrument_env) spec.env[k] = v;
  spec.log_path = log_path;
  spec.port = port;
  spec.ready_timeout_s = ctx.c.plan.ready_timeout_s;
  spec.cpus = at.runtime_cpus;
  return spec;
}

}  // namespace

std::string probed_check_blocker(const EvidenceOutcome& ev) {
  if (!ev.probe.attached && !device_timings_on(ev)) {
    if (auto off = ev.instruments_off.find("device_timings"); off != ev.instruments_off.end())
      return "the evidence pass ran without device timings: " + off->second;
    return ev.probe.why_not.empty() ? "the kernel probe was not attached" : ev.probe.why_not;
  }
  if (auto off = ev.instruments_off.find("kernel_probe"); ev.probe.attached && off != ev.instruments_off.end())
    return "the evidence pass ran without the kernel probe: " + off->second;
  const std::string source = ev.probe.attached ? ev.probe.tally_path : ev.log_path + " (device timings)";
  if (!ev.kernels) return "the evidence pass left no kernel tally (" + source + "): nothing to tie to";
  if (!ev.kernels->has_records()) return "the evidence pass's kernel tally has no records: nothing to tie to";
  return "";
}

Result<ProbedCheck> run_probed_check(const CaseContext& ctx, const LaunchPlacement& at, const EvidenceOutcome& ev) {
  ProbedCheck pc;
  pc.why_not = probed_check_blocker(ev);
  if (!pc.why_not.empty()) return pc;
  const auto t0 = std::chrono::steady_clock::now();
  pc.evidence = attention_kernel_set(*ev.kernels);
  pc.log_path = at.out_dir + "/probed-check.log";
  // The instrument: the kernel probe, or where the evidence pass read level 3 from the backend's
  // own op timings (Vulkan), those timings (their blocks in this check's log).
  const Instrument* timings = device_timings_on(ev);
  GpuProbePlan probe;
  Instrument instrument;
  if (timings) {
    if (!ctx.signatures.device_timings) return make_error("the evidence pass had device timings but the runtime data has none");
    instrument = *timings;
    pc.tally_path = pc.log_path;
  } else {
    probe = plan_gpu_probe(at.out_dir + "/kernels-probed-check.tsv");
    if (!probe.attached) return make_error("the kernel probe attached to the evidence pass but not now: " + probe.why_not);
    pc.tally_path = probe.tally_path;
    instrument = Instrument{"kernel_probe", {"kernels"}, probe.env, {}, false};
  }

  FP_TRY(LaunchSpec spec, timed_launch_with(ctx, at, instrument.env, pc.log_path));
  // The instrument is the only one here, and the timed runs just ran this launch without it: a
  // runtime that breaks now broke under it (flow/passes/instrument_retry.h), and no launch is added.
  const std::string how = instrument.how();
  const std::string what = timings ? "device timings" : "the kernel probe";
  auto broke_under_instrument = [&](const LaunchEnd& end) {
    pc.why_not = instrument_off_text(what, how, end) + "; the timed runs ran the same launch without it (log " + pc.log_path + ")";
    return pc;
  };
  StartFailure why;
  auto server = start_server(spec, ctx.adapter, &why);
  if (!server) {
    const LaunchEnd end = classify_launch_failure(LaunchPhase::Start, why.exit, why.not_ready, server.error().message,
                                                  last_words_of_file(pc.log_path, ctx.signatures.instruments));
    if (end.broke) return broke_under_instrument(end);
    return server.error();
  }
  pc.argv = server->argv;
  pc.load = job_load_text(ctx, at);
  auto answer = send_job_load(ctx, at, server->base_url);
  const ExitInfo ended = answer ? ExitInfo{} : ended_by_itself(server->process);
  server->process.stop(5.0);  // the probe writes its tally at exit (and at intervals); the log is complete
  if (!answer) {
    const std::string error = "the request failed (" + pc.load + "): " + answer.error().message + "\nlog " + pc.log_path +
                              " ends:\n" + log_tail(pc.log_path);
    const LaunchEnd end = classify_launch_failure(LaunchPhase::Requests, ended, false, error,
                                                  last_words_of_file(pc.log_path, ctx.signatures.instruments));
    return broke_under_instrument(end);
  }
  // The tally: the probe's files, or the device timing blocks of this check's log.
  auto read_tally = [&]() -> Result<KernelTally> {
    if (!timings) return read_probe_tallies(probe);
    FP_TRY(std::string text, read_text_file(pc.log_path));
    KernelTally t = device_timing_tally(text, *ctx.signatures.device_timings, pc.log_path);
    if (t.kernels.empty()) return make_error(t.reason.empty() ? "no device timing blocks in the log" : t.reason);
    return t;
  };
  auto tally = read_tally();
  if (tally) {
    const KernelSummary k = classify_kernels(*tally, ctx.signatures);
    pc.check = attention_kernel_set(k);
    pc.families = family_shares(k);
    // One stream: the same names; several at once: the same path (evidence/kernel_set.h).
    pc.mismatches =
        job_load_streams(ctx, at) > 1 ? compare_kernel_paths(pc.evidence, pc.check) : compare_kernel_sets(pc.evidence, pc.check);
    if (job_load_streams(ctx, at) > 1 && pc.mismatches.empty()) pc.variants = compare_kernel_sets(pc.evidence, pc.check);
    const KernelTimePerToken per_token = kernel_time_per_token(k, answer->prompt_tokens + answer->completion_tokens);
    pc.gpu_ms_per_token = per_token.gpu_ms;
    pc.attention_gpu_ms_per_token = per_token.attention_ms;
  } else {
    pc.mismatches.push_back("attention kernels: the timed configuration under " + what + " left no kernel tally (" +
                            tally.error().message + ")" + (timings ? "" : "; the probe reports why in the runtime's log " + pc.log_path));
  }
  pc.ran = true;
  pc.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return pc;
}

Result<ProbedLoad> run_probed_load(const CaseContext& ctx, const LaunchPlacement& at, const GpuProbePlan& probe) {
  if (!probe.attached) return make_error("the kernel probe is not attached: " + probe.why_not);
  ProbedLoad out;
  out.log_path = at.out_dir + "/probed.log";
  out.tally_path = probe.tally_path;
  FP_TRY(LaunchSpec spec, timed_launch_with(ctx, at, probe.env, out.log_path));
  FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
  // The case's prompts at their asked length, as the timed launches send them.
  CaseContext load_ctx = ctx;
  auto fitted = fit_case_prompts(ctx, server.base_url);
  if (fitted) adopt_fitted_prompts(load_ctx, *fitted);
  out.load = job_load_text(load_ctx, at);
  auto answer = fitted ? send_job_load(load_ctx, at, server.base_url) : Result<LoadAnswers>(fitted.error());
  server.process.stop(5.0);  // the probe writes its tally at exit
  if (!answer)
    return make_error("the request failed (" + out.load + "): " + answer.error().message + "\nlog " + out.log_path + " ends:\n" +
                      log_tail(out.log_path));
  FP_TRY(KernelTally tally, read_probe_tallies(probe));
  out.tokens = answer->prompt_tokens + answer->completion_tokens;
  out.per_token = kernel_time_per_token(classify_kernels(tally, ctx.signatures), out.tokens);
  if (!std::isfinite(out.per_token.gpu_ms))
    return make_error("kernel tally " + probe.tally_path + ": no kernel time over " + std::to_string(out.tokens) + " tokens (" + out.load +
                      ")");
  return out;
}

std::string probed_check_text(const ProbedCheck& pc) {
  if (!pc.ran) return "not run: " + pc.why_not;
  std::string gpu;
  if (std::isfinite(pc.gpu_ms_per_token)) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "; GPU %.4g ms/token, attention %.4g ms/token", pc.gpu_ms_per_token,
                  pc.attention_gpu_ms_per_token);
    gpu = buf;
  }
  const std::string load = pc.load.empty() ? "" : "; load: " + pc.load;
  if (pc.mismatches.empty() && !pc.variants.empty())
    return "attention path identical to the evidence pass, kernel variants differ (" + join(pc.variants, "; ") + ")" + load + gpu;
  if (pc.mismatches.empty())
    return "attention kernels identical to the evidence pass (" + kernel_set_text(pc.check) + ")" + load + gpu;
  return "attention kernels DIFFER from the evidence pass: " + join(pc.mismatches, "; ") + load + gpu;
}

void add_kernel_launch(std::vector<FamilySamples>& samples, std::vector<std::string>& launches,
                       const std::vector<FamilyShare>& families, const std::string& what) {
  if (families.empty()) return;
  std::vector<FamilyLaunchShare> launch;
  for (const auto& f : families) launch.push_back({f.family, f.fused, f.share});
  add_probed_launch(samples, launch);
  launches.push_back(what);
}

}  // namespace fp
