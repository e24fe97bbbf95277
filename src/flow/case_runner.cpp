#include "flow/case_runner.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "flow/attached_pass.h"
#include "flow/evidence_pass.h"
#include "flow/figures.h"
#include "flow/golden_check.h"
#include "flow/headroom.h"
#include "flow/launches.h"
#include "flow/low_noise_figures.h"
#include "flow/memory_figures.h"
#include "golden/memory_policy.h"
#include "flow/probed_check.h"
#include "flow/timed_log_check.h"
#include "flow/progress.h"
#include "flow/workload_summary.h"
#include "golden/compare.h"
#include "golden/fingerprint.h"
#include "golden/golden_paths.h"
#include "history/history.h"
#include "report/redact.h"
#include "runtime/cpu_quota.h"
#include "report/result_file.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// The first `n` bytes of a file ("" when unreadable): where a runtime states its build.
std::string file_head(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string s(n, '\0');
  in.read(&s[0], static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

// Phases go to the case's progress (flow/progress.h): a status line on a terminal, plain lines in CI.
void progress(const RunOptions& o, const std::string& case_name, const std::string& msg) {
  if (Progress* p = current_progress(); p && !o.quiet) p->phase(case_name, msg);
}

// Every launch's answers: stable means the same text in every request of every launch.
void collect_answers(const std::vector<TimedPass>& passes, RunResult& r) {
  std::map<std::string, std::vector<std::string>> by_prompt;
  std::vector<std::string> order;
  auto note = [&](const std::string& id, const std::string& text) {
    if (!by_prompt.count(id)) order.push_back(id);
    by_prompt[id].push_back(text);
  };
  for (const TimedPass& pass : passes) {
    if (pass.cold_first.done) note(pass.cold_first_prompt, pass.cold_first.text);
    for (const auto& tr : pass.requests) note(tr.prompt_id, tr.result.text);
  }
  std::sort(order.begin(), order.end());
  for (const auto& id : order) {
    AnswerResult a;
    a.prompt_id = id;
    a.text = by_prompt[id].front();
    for (const auto& t : by_prompt[id]) a.stable = a.stable && t == a.text;
    a.reference = "no reference";
    r.answers.push_back(a);
  }
}


}  // namespace

CaseRun run_case_file(const std::string& case_path, const RunOptions& opts_in) {
  RunOptions o = opts_in;
  if (o.results_root.empty()) o.results_root = o.suite.results;
  if (o.golden_root.empty()) o.golden_root = o.suite.golden;
  // Absolute folders, so that result.txt shows those inside the suite as {suite}/... however named.
  for (std::string* dir : {&o.results_root, &o.golden_root, &o.timing_golden_root, &o.out_dir}) {
    std::error_code aec;
    fs::path p = dir->empty() ? fs::path() : fs::absolute(*dir, aec).lexically_normal();
    if (p.filename().empty() && p.has_parent_path()) p = p.parent_path();  // "dir/" -> "dir"
    if (!p.empty() && !aec) *dir = p.string();
  }
  CaseRun run;
  Progress case_progress(detect_progress_style(o.quiet), std::cerr);
  ScopedProgress progress_scope(&case_progress);
  auto fail_early = [&](int code, const std::string& msg) {
    run.exit_code = code;
    run.message = msg;
    return run;
  };

  auto resolved = resolve_run_context(case_path, o.suite, o.rehash);
  if (!resolved) return fail_early(resolved.exit_code(), resolved.error().message);
  CaseContext ctx = *resolved;
  const Case& c = ctx.c;
  const std::string& sha = c.model.sha256;  // checked against the file by resolve_case_context
  ctx.flag_value = o.flag_on ? (*o.flag_on ? c.flag.on : c.flag.off) : c.flag.used();

  RunResult& r = run.result;
  r.case_name = c.name;
  r.case_file = fs::absolute(c.file).lexically_normal().string();  // result.txt shows it under {suite}
  r.description = c.description;
  r.job = job_name(c.job);
  r.runtime = c.runtime;
  r.runtime_found_by = ctx.runtime.how_found;
  r.flashproof_version = FLASHPROOF_VERSION;
  r.started_utc = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
  r.model_path = c.model.path;
  r.model_file = ctx.model_path;
  r.suite_root = ctx.suite.root;
  r.model_sha256 = sha;
  r.flag_value = ctx.flag_value;
  r.expect_fused = c.expect.fused_attention;
  r.expect_backend = c.expect.backend;
  if (c.attach) r.attached = c.attach->endpoint;

  auto fingerprint = c.attach ? Result<Fingerprint>(attached_fingerprint(c)) : case_fingerprint(c, ctx.adapter, ctx.runtime, sha);
  if (!fingerprint) return fail_early(kRunIncomplete, fingerprint.error().message);
  Fingerprint fpr = *fingerprint;
  r.runtime_version = fpr.runtime_version;
  r.runtime_build = fpr.runtime_build;
  r.fingerprint_id = fpr.id();
  ctx.runtime_build = fpr.runtime_build;

  ctx.out_dir = o.out_dir.empty() ? o.results_root + "/" + fpr.id() + "/" + c.name + "/" + utc_stamp("%Y%m%dT%H%M%SZ") + "-" + std::to_string(getpid())
                                  : o.out_dir;
  std::error_code ec;
  fs::create_directories(ctx.out_dir, ec);
  if (ec) return fail_early(kRunIncomplete, ctx.out_dir + ": cannot create the run folder: " + ec.message());
  r.output_dir = ctx.out_dir;

  auto finish = [&](int code) {
    r.fingerprint = fpr.to_json();
    if (auto st = write_result_files(ctx.out_dir, r); !st) std::cerr << "flashproof: " << st.error().message << "\n";
    if (o.out_dir.empty())  // the default layout keeps the history (history/history.h)
      if (auto st = record_run(o.results_root, {utc_stamp("%Y-%m-%dT%H:%M:%SZ"), r.fingerprint_id, r.case_name, r.status(), ctx.out_dir}); !st)
        std::cerr << "flashproof: history: " << st.error().message << "\n";
    run.exit_code = code;
    return run;
  };

  progress(o, c.name, "evidence pass: " + ctx.runtime.how_found + (c.attach ? "" : ", flag " + ctx.flag_value));
  auto ev = run_evidence_pass(ctx);
  if (!ev) {
    r.failures.push_back("evidence pass failed: " + ev.error().message);
    return finish(kRunIncomplete);
  }
  adopt_fitted_prompts(ctx, ev->prompts);
  if (c.attach) {
    r.attached_log = ev->log_source.empty() ? "none" : ev->log_source;
    r.attached_notes = ev->notes;
    r.runtime_version = ev->answer_fingerprint.empty() ? "attached: the server's answers name no build" : ev->answer_fingerprint;
    r.runtime_build = attached_build(c.runtime, ev->answer_fingerprint);
  }
  r.evidence_argv = redact_argv(ev->argv);
  if (!c.attach) r.evidence_line = shown_launch(ctx, ctx.adapter.evidence_args);
  fpr.runtime_build_log = build_stated_in_log(file_head(ev->log_path, 1 << 20));
  r.evidence_env = redact_env(ev->env);
  for (const auto& i : ev->instruments_on) r.instruments_on.push_back(i.label() + " (" + i.how() + ")");
  for (const auto& [name, why] : ev->instruments_off) r.instruments_off.push_back(why);
  r.instrument_extra_launches = ev->extra_launches;
  r.instrument_retry_steps = ev->retry_steps;
  r.instruments_known = true;
  const Verdict& v = ev->verdict;
  r.verdict = to_string(v.activity);
  r.verdict_backend = backends_text(v.fused_backends);
  r.verdict_explanation = v.explanation;
  r.verdict_quotes = v.quotes;
  for (int l : v.levels_used) r.levels_used.push_back(v.levels[static_cast<size_t>(l - 1)].name);
  r.levels_unavailable = v.levels_unavailable;
  r.verdict_as_expected = verdict_as_expected(v, c.expect.fused_attention);
  r.evidence_signals = signals_text(ev->signals);
  r.evidence_load = ev->load;
  if (ev->kernels) add_kernel_launch(r.kernel_families, r.kernel_launches, family_shares(*ev->kernels), "evidence pass");
  for (const auto& cause : ev->causes) r.verdict_causes.push_back(cause.text());
  if (ev->causes.empty() && !ev->causes_line.empty()) r.verdict_causes.push_back(ev->causes_line);
  if (!r.verdict_as_expected)
    r.failures.push_back(std::string("fused attention expected ") + (c.expect.fused_attention ? "active" : "not active") +
                         " on " + c.expect.backend + ", evidence says " + r.verdict + ": " + v.explanation +
                         (ev->causes_line.empty() ? "" : ". " + ev->causes_line));

  progress(o, c.name, "evidence: " + r.verdict + " (" + std::to_string(ev->wall_s).substr(0, 5) + " s); timed runs");
  // The timed runs: `launches` fresh launches, each a cold start of the runtime (flow/launches.h).
  // Recording a missing golden takes kDefaultGoldenLaunches unless told otherwise: a golden holds
  // the spread of launch medians (golden/threshold_policy.h).
  // An attached server cannot be launched afresh: its "launches" are separated rounds of requests.
  int launches = o.launches;
  if (launches <= 0) {
    std::error_code gec;
    const bool recording = o.record_missing && o.golden_fingerprint.empty() &&
                           !fs::exists(golden_paths(o.golden_root, fpr.id(), c.name).golden_file, gec);
    launches = recording ? kDefaultGoldenLaunches : c.attach ? kAttachedRounds : 1;
  }
  std::optional<CpuQuota> quota;  // calibration: the timed launches under a CPU quota
  if (o.cpu_share < 1) {
    auto q = CpuQuota::create(o.cpu_share, "run");
    if (!q) {
      r.failures.push_back("--cpu-share: " + q.error().message);
      return finish(kRunIncomplete);
    }
    quota = std::move(*q);
    ctx.cgroup_procs = quota->procs_file();
    r.golden_lines.push_back("timed launches under a " + quota->describe() + " (calibration: an injected slowdown)");
  }
  TimedOptions timed_options = o.timed;
  if (c.job == Job::Batch) timed_options.concurrent_rounds = true;
  timed_options.levels = true;
  std::vector<TimedPass> passes;
  for (int k = 1; k <= launches && !interrupted(); ++k) {
    CaseContext launch_ctx = ctx;
    launch_ctx.out_dir = launch_dir(ctx.out_dir, k);
    fs::create_directories(launch_ctx.out_dir, ec);
    TimedOptions this_launch = timed_options;
    if (c.attach && k > 1) {  // the next round of the same server, after a pause; warmed up already
      this_launch.warmup = 0;
      for (int t = 0; t < static_cast<int>(kAttachedRoundGapS * 10) && !interrupted(); ++t)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (interrupted()) break;
    }
    if (launches > 1)
      progress(o, c.name, std::string(c.attach ? "timed runs: round " : "timed runs: launch ") + std::to_string(k) + " of " +
                              std::to_string(launches));
    auto timed = run_timed_pass(launch_ctx, this_launch);
    if (!timed) {
      r.failures.push_back("timed runs failed" + (launches > 1 ? " (launch " + std::to_string(k) + " of " + std::to_string(launches) + ")" : std::string()) +
                           ": " + timed.error().message);
      return finish(kRunIncomplete);
    }
    passes.push_back(*timed);
    if (!timed->errors.empty()) break;
  }
  const TimedPass first = passes.empty() ? TimedPass{} : passes.front();
  const TimedPass pooled = pooled_pass(passes);
  r.launches = static_cast<int>(passes.size());
  if (c.attach)
    r.attached_notes.push_back("timed runs: " + std::to_string(passes.size()) + " separated rounds of requests " +
                               std::to_string(static_cast<int>(kAttachedRoundGapS)) + " s apart, the warm-up before the first only, "
                               "stand in for fresh launches (an attached server is not relaunched): each figure's launch medians are "
                               "round medians, and their spread is its noise band until the nights widen it");
  r.timed_argv = redact_argv(first.argv);
  if (!c.attach) r.timed_line = shown_launch(ctx, ctx.adapter.timed_args);  // an attached server's line is not ours to show
  r.cold_ready_ms = c.attach ? -1 : first.ready_s * 1e3;  // an attached server was up before we came
  r.cold_first_ttft_ms = first.cold_first.ttft_s >= 0 ? first.cold_first.ttft_s * 1e3 : -1;
  r.cold_first_e2e_ms = first.cold_first.e2e_s >= 0 ? first.cold_first.e2e_s * 1e3 : -1;
  r.figures = launch_figures(c, passes);
  r.fidelity = fidelity_summary(pooled);
  WorkloadSummary workload = summarize_workload(ctx, pooled);
  r.workload = workload.lines;
  if (pooled.peak_rss_bytes) r.peak_rss_mib = static_cast<double>(*pooled.peak_rss_bytes) / (1024.0 * 1024.0);
  r.gpu_memory = first.gpu_memory;
  collect_answers(passes, r);

  // Every launch must be the evidence pass's configuration (cheap signals); memory from each launch
  // (flow/memory_figures.h), the result's memory lines from the first.
  std::vector<LaunchMemory> memory;
  for (size_t k = 0; k < passes.size() && !c.attach; ++k) {  // an attached run has no log of its own
    const std::string which = passes.size() > 1 ? " (launch " + std::to_string(k + 1) + ")" : "";
    auto check = check_timed_log(passes[k].log_path, ctx.signatures, &ev->signals);
    if (!check) {
      r.failures.push_back("timed run log" + which + ": " + check.error().message);
      continue;
    }
    for (const auto& m : check->mismatches) {
      r.signal_mismatches.push_back(m + which);
      r.failures.push_back("timed run" + which + " differs from the evidence pass: " + m);
    }
    const LogScan& scan = check->log.scan;
    memory.push_back(launch_memory(passes[k], scan));
    if (k > 0) continue;
    r.timed_signals = signals_text(check->signals);
    r.kv_mib_by_device = scan.kv_mib_by_device();
    r.compute_mib_by_device = scan.compute_mib_by_device();
    if (auto kv = scan.kv_total()) r.kv_cache_mib = kv->mib;
    if (!scan.kv_tokens.empty()) r.kv_cache_tokens = scan.kv_tokens.back().value;
    HeadroomOutcome room = launch_headroom(ctx, passes[k], scan);
    r.headroom = room.headroom;
    r.headroom_why_not = room.why_not;
  }
  for (auto& f : memory_figures(memory)) r.figures.push_back(std::move(f));
  // How busy the rest of the machine was during each launch (golden/compare.h kOtherLoadFigure).
  {
    FigureResult busy;
    busy.name = kOtherLoadFigure;
    for (const auto& p : passes)
      if (p.other_load) busy.samples.push_back(*p.other_load);
    if (!busy.samples.empty()) {
      busy.launch_medians = busy.samples;
      busy.summary = summarize(busy.samples);
      r.figures.push_back(std::move(busy));
    }
  }
  if (c.attach) r.headroom_why_not = launch_headroom(ctx, first, LogScan{}).why_not;
  if (!pooled.errors.empty() || interrupted()) {
    const TimedPass& last = passes.empty() ? first : passes.back();
    for (const auto& e : pooled.errors) r.failures.push_back("timed runs: " + e);
    if (pooled.errors.empty()) r.failures.push_back("timed runs: interrupted");
    r.failures.push_back("timed runs incomplete; log " + last.log_path + " ends:\n" + log_tail(last.log_path, 10));
    return finish(kRunIncomplete);
  }
  for (const auto& f : workload.failures) r.failures.push_back(f);
  // Level 3 tie: the timed configuration, probed after each launch, must run the evidence pass's
  // attention kernels; each probed launch adds its kernel families' shares to the run's kernel set.
  if (probed_check_blocker(*ev).empty()) progress(o, c.name, "probed check: the timed configuration with the kernel probe or device timings");
  std::vector<std::string> check_texts;
  std::vector<double> gpu_per_token, attention_per_token;  // per probed launch (flow/low_noise_figures.h)
  for (size_t k = 1; k <= std::max<size_t>(passes.size(), 1); ++k) {
    CaseContext check_ctx = ctx;
    check_ctx.out_dir = launch_dir(ctx.out_dir, static_cast<int>(k));
    const std::string which = passes.size() > 1 ? " (after launch " + std::to_string(k) + ")" : "";
    auto pc = run_probed_check(check_ctx, *ev);
    if (!pc) {
      r.probed_check = "failed" + which + ": " + pc.error().message;
      r.failures.push_back("probed check failed" + which + ": " + pc.error().message);
      return finish(kRunIncomplete);
    }
    check_texts.push_back(probed_check_text(*pc));
    if (!pc->ran) break;
    add_kernel_launch(r.kernel_families, r.kernel_launches, pc->families, "probed check" + which);
    gpu_per_token.push_back(pc->gpu_ms_per_token);
    attention_per_token.push_back(pc->attention_gpu_ms_per_token);
    for (const auto& m : pc->mismatches) {
      r.signal_mismatches.push_back("probed check" + which + ": " + m);
      r.failures.push_back("timed configuration" + which + " differs from the evidence pass: " + m);
    }
    progress(o, c.name, "probed check" + which + ": " + (pc->mismatches.empty() ? "same attention kernels" : "attention kernels DIFFER"));
  }
  r.probed_check = check_texts.front();
  for (size_t k = 1; k < check_texts.size(); ++k) r.probed_check += "\nafter launch " + std::to_string(k + 1) + ": " + check_texts[k];
  // Low-noise figures from the probed launches; then what gates (kernel time first on CUDA), the
  // minimum effects, and the guards of every figure a user feels that does not gate.
  for (auto& f : kernel_figures(gpu_per_token, attention_per_token)) r.figures.push_back(std::move(f));
  for (auto& f : r.figures)
    if (!is_memory_figure(f.name)) f.min_effect = min_effect(c, f.name);  // machine.other_load: reported only
  const std::string gpu_gates = apply_gpu_gates(c, expects_cuda(c, ctx.gpu_backends), r.figures);
  if (!gpu_gates.empty()) r.golden_lines.push_back("gated figures: " + gpu_gates);
  for (auto& f : r.figures)
    if (!f.gate && !is_memory_figure(f.name)) f.guard = guard_effect(c, f.name);
  r.complete = true;
  r.fingerprint = fpr.to_json();
  GoldenCheckOptions g;
  g.golden_root = o.golden_root;
  g.timing_root = o.timing_golden_root;
  g.results_root = o.results_root;
  g.golden_id = o.golden_fingerprint;
  g.record_missing = o.record_missing;
  g.record_missing_answers = o.record_missing_answers;
  compare_goldens(g, r);
  if (c.attach && r.golden_status == "recorded")  // what a golden of a server we did not start cannot hold
    r.golden_lines.push_back("not recorded (attached): the cold start (the server was up before the run), the attention kernel "
                             "set (no kernel probe in a server flashproof did not start), launch-to-launch noise (it is not "
                             "relaunched: " + std::to_string(r.launches) + " separated rounds stand in for launches)");
  return finish(r.failures.empty() ? kRunPass : kRunFail);
}

}  // namespace fp
