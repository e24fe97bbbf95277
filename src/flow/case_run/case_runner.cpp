#include "flow/case_run/case_runner.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "flow/case_run/golden_check.h"
#include "flow/passes/attached_pass.h"
#include "flow/passes/evidence_pass.h"
#include "flow/passes/figures.h"
#include "flow/passes/headroom.h"
#include "flow/passes/launches.h"
#include "flow/passes/low_noise_figures.h"
#include "flow/passes/memory_figures.h"
#include "flow/passes/probed_check.h"
#include "flow/passes/progress.h"
#include "flow/passes/timed_log_check.h"
#include "flow/passes/workload_summary.h"
#include "golden/compare.h"
#include "golden/fingerprint.h"
#include "golden/golden_paths.h"
#include "golden/memory_policy.h"
#include "history/history.h"
#include "report/headroom_text.h"
#include "report/redact.h"
#include "report/result_file.h"
#include "report/server_gauges_text.h"
#include "runtime/cpu_quota.h"
#include "util/disk_space.h"
#include "util/regex.h"
#include "util/run_folder.h"
#include "util/text.h"
#include "util/utf8.h"

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

// Phases go to the case's progress (flow/passes/progress.h): a status line on a terminal, plain lines in CI.
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


// Folders made absolute, so that result.txt shows those inside the suite as {suite}/... however named.
RunOptions with_absolute_folders(const RunOptions& in) {
  RunOptions o = in;
  if (o.results_root.empty()) o.results_root = o.suite.results;
  if (o.golden_root.empty()) o.golden_root = o.suite.golden;
  for (std::string* dir : {&o.results_root, &o.golden_root, &o.timing_golden_root, &o.out_dir}) {
    std::error_code aec;
    fs::path p = dir->empty() ? fs::path() : fs::absolute(*dir, aec).lexically_normal();
    if (p.filename().empty() && p.has_parent_path()) p = p.parent_path();  // "dir/" -> "dir"
    if (!p.empty() && !aec) *dir = p.string();
  }
  return o;
}

// How the run reaches its server, chosen once per run: flashproof launches the runtime (each timed
// launch a cold start with a log of its own), or attaches to a server something else started
// (flow/passes/attached_pass.h: rounds of requests stand in for launches, no launch line, no cold start).
class ServerMode {
 public:
  virtual ~ServerMode() = default;
  virtual Result<Fingerprint> fingerprint(const CaseContext& ctx) const = 0;
  // The evidence pass's progress line and the pass itself.
  virtual std::string evidence_phase(const CaseContext& ctx, const LaunchPlacement& at) const = 0;
  virtual Result<EvidenceOutcome> evidence_pass(const CaseContext& ctx, const LaunchPlacement& at) const = 0;
  // What the evidence pass adds to the result beyond the verdict (launch line, or the server's log and build).
  virtual void note_evidence(const CaseContext& ctx, const LaunchPlacement& at, const EvidenceOutcome& ev, RunResult& r) const = 0;
  // The timed launches when neither the options nor a golden to record say how many.
  virtual int default_launches() const = 0;
  // Before timed launch k (1-based): false when interrupted while waiting.
  virtual bool before_launch(int k, TimedOptions& options) const = 0;
  virtual std::string launch_word() const = 0;  // "launch" or "round"
  // What the timed runs add to the result: their launch line, the cold start, notes.
  virtual void note_timed(const CaseContext& ctx, const LaunchPlacement& at, size_t rounds, const TimedPass& first, RunResult& r) const = 0;
  // Whether each launch has a log of its own to tie to the evidence pass and read memory from.
  virtual bool launches_have_logs() const = 0;
  // After the golden step: what a golden of this server cannot hold.
  virtual void note_golden(RunResult& r) const = 0;
};

class LaunchedServer : public ServerMode {
 public:
  Result<Fingerprint> fingerprint(const CaseContext& ctx) const override {
    return case_fingerprint(ctx.c, ctx.adapter, ctx.runtime, ctx.c.model.sha256);  // sha256 checked by resolve_run_context
  }
  std::string evidence_phase(const CaseContext& ctx, const LaunchPlacement& at) const override {
    return "evidence pass: " + ctx.runtime.how_found + ", flag " + at.flag_value;
  }
  Result<EvidenceOutcome> evidence_pass(const CaseContext& ctx, const LaunchPlacement& at) const override {
    return run_evidence_pass(ctx, at);
  }
  void note_evidence(const CaseContext& ctx, const LaunchPlacement& at, const EvidenceOutcome&, RunResult& r) const override {
    r.evidence_line = shown_launch(ctx, at, ctx.adapter.evidence_args);
  }
  int default_launches() const override { return 1; }
  bool before_launch(int, TimedOptions&) const override { return true; }
  std::string launch_word() const override { return "launch"; }
  void note_timed(const CaseContext& ctx, const LaunchPlacement& at, size_t, const TimedPass& first, RunResult& r) const override {
    r.timed_line = shown_launch(ctx, at, ctx.adapter.timed_args);
    r.cold_ready_ms = first.ready_s * 1e3;
  }
  bool launches_have_logs() const override { return true; }
  void note_golden(RunResult&) const override {}
};

class AttachedServer : public ServerMode {
 public:
  Result<Fingerprint> fingerprint(const CaseContext& ctx) const override { return attached_fingerprint(ctx.c); }
  std::string evidence_phase(const CaseContext& ctx, const LaunchPlacement&) const override {
    return "evidence pass: " + ctx.runtime.how_found;
  }
  Result<EvidenceOutcome> evidence_pass(const CaseContext& ctx, const LaunchPlacement& at) const override {
    return run_attached_evidence_pass(ctx, at);
  }
  void note_evidence(const CaseContext& ctx, const LaunchPlacement&, const EvidenceOutcome& ev, RunResult& r) const override {
    r.attached_log = ev.log_source.empty() ? "none" : ev.log_source;
    r.attached_notes = ev.notes;
    r.runtime_version = ev.answer_fingerprint.empty() ? "attached: the server's answers name no build" : ev.answer_fingerprint;
    r.runtime_build = attached_build(ctx.c.runtime, ev.answer_fingerprint);
  }
  int default_launches() const override { return kAttachedRounds; }
  bool before_launch(int k, TimedOptions& options) const override {
    if (k == 1) return true;
    options.warmup = 0;  // the next round of the same server, after a pause; warmed up already
    for (int t = 0; t < static_cast<int>(kAttachedRoundGapS * 10) && !interrupted(); ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return !interrupted();
  }
  std::string launch_word() const override { return "round"; }
  void note_timed(const CaseContext&, const LaunchPlacement&, size_t rounds, const TimedPass&, RunResult& r) const override {
    r.attached_notes.push_back("timed runs: " + std::to_string(rounds) + " separated rounds of requests " +
                               std::to_string(static_cast<int>(kAttachedRoundGapS)) + " s apart, the warm-up before the first only, "
                               "stand in for fresh launches (an attached server is not relaunched): each figure's launch medians are "
                               "round medians, and their spread is its noise band until the nights widen it");
    r.cold_ready_ms = -1;  // the server was up before we came; its launch line is not ours to show
  }
  bool launches_have_logs() const override { return false; }
  void note_golden(RunResult& r) const override {
    if (r.golden_status != "recorded") return;  // what a golden of a server we did not start cannot hold
    r.golden_lines.push_back("not recorded (attached): the cold start (the server was up before the run), the attention kernel "
                             "set (no kernel probe in a server flashproof did not start), launch-to-launch noise (it is not "
                             "relaunched: " + std::to_string(r.launches) + " separated rounds stand in for launches)");
  }
};

std::unique_ptr<ServerMode> server_mode(const Case& c) {
  if (c.attach) return std::make_unique<AttachedServer>();
  return std::make_unique<LaunchedServer>();
}

// What the result says about the case before anything runs.
void describe_case(const CaseContext& ctx, const LaunchPlacement& at, RunResult& r) {
  const Case& c = ctx.c;
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
  r.model_sha256 = c.model.sha256;
  r.flag_value = at.flag_value;
  r.expect_fused = c.expect.fused_attention;
  r.expect_backend = c.expect.backend;
  if (c.attach) r.attached = c.attach->endpoint;
}

// The evidence pass's outcome in the result: launch, instruments, verdict, causes; a verdict not as
// expected is a failure.
void note_evidence(const CaseContext& ctx, const EvidenceOutcome& ev, RunResult& r) {
  const Case& c = ctx.c;
  r.evidence_argv = redact_argv(ev.argv);
  r.evidence_env = redact_env(ev.env);
  for (const auto& i : ev.instruments_on) r.instruments_on.push_back(i.label() + " (" + i.how() + ")");
  for (const auto& [name, why] : ev.instruments_off) r.instruments_off.push_back(why);
  r.instrument_extra_launches = ev.extra_launches;
  r.instrument_retry_steps = ev.retry_steps;
  r.instruments_known = true;
  const Verdict& v = ev.verdict;
  r.verdict.activity = v.activity;
  r.verdict.fused_backends = v.fused_backends;
  r.verdict.explanation = v.explanation;
  r.verdict.quotes = v.quotes;
  for (int l : v.levels_used) r.verdict.levels_used.push_back(v.levels[static_cast<size_t>(l - 1)].name);
  r.verdict.levels_unavailable = v.levels_unavailable;
  r.verdict.as_expected = verdict_as_expected(v, c.expect.fused_attention);
  r.verdict.degraded = v.degraded;
  r.evidence_signals = signals_text(ev.signals);
  r.evidence_load = ev.load;
  if (ev.kernels) add_kernel_launch(r.kernel_families, r.kernel_launches, family_shares(*ev.kernels), "evidence pass");
  for (const auto& cause : ev.causes) r.verdict_causes.push_back(cause.text());
  if (ev.causes.empty() && !ev.causes_line.empty()) r.verdict_causes.push_back(ev.causes_line);
  if (!r.verdict.as_expected)
    r.failures.push_back(std::string("fused attention expected ") + (c.expect.fused_attention ? "active" : "not active") +
                         " on " + c.expect.backend + ", evidence says " + to_string(v.activity) + ": " + v.explanation +
                         (ev.causes_line.empty() ? "" : ". " + ev.causes_line));
  else if (const std::string why = degradation_unexpected(v.degraded, c.expect.degraded); !why.empty())
    r.failures.push_back("expect.degraded " + std::string(*c.expect.degraded ? "true" : "false") + ": " + why);
}

// The timed runs: `launches` fresh launches, each a cold start of the runtime (flow/passes/launches.h).
// Recording a missing golden takes kDefaultGoldenLaunches unless told otherwise: a golden holds
// the spread of launch medians (golden/threshold_policy.h).
int timed_launch_count(const RunOptions& o, const ServerMode& server, const std::string& fingerprint_id, const std::string& case_name) {
  if (o.launches > 0) return o.launches;
  std::error_code gec;
  const bool recording = o.record_missing && o.golden_fingerprint.empty() &&
                         !fs::exists(golden_paths(o.golden_root, fingerprint_id, case_name).golden_file, gec);
  return recording ? kDefaultGoldenLaunches : server.default_launches();
}

// Runs the timed launches; stops at the first launch with request errors, or when interrupted.
// An error: a launch that failed outright (the message says which of how many).
Result<std::vector<TimedPass>> run_timed_launches(const CaseContext& ctx, const LaunchPlacement& run_at, const ServerMode& server,
                                                  const TimedOptions& timed_options, int launches, const RunOptions& o) {
  std::vector<TimedPass> passes;
  for (int k = 1; k <= launches && !interrupted(); ++k) {
    LaunchPlacement at = run_at;  // the launch's own folder (launch-<k>/ from the second on)
    at.out_dir = launch_dir(run_at.out_dir, k);
    std::error_code ec;
    fs::create_directories(at.out_dir, ec);
    TimedOptions this_launch = timed_options;
    if (!server.before_launch(k, this_launch)) break;
    if (launches > 1)
      progress(o, ctx.c.name, "timed runs: " + server.launch_word() + " " + std::to_string(k) + " of " + std::to_string(launches));
    auto timed = run_timed_pass(ctx, at, this_launch);
    if (!timed)
      return make_error("timed runs failed" + (launches > 1 ? " (launch " + std::to_string(k) + " of " + std::to_string(launches) + ")" : std::string()) +
                        ": " + timed.error().message);
    passes.push_back(*timed);
    if (!timed->errors.empty()) break;
  }
  return passes;
}

// Every launch must be the evidence pass's configuration (cheap signals, flow/passes/timed_log_check.h);
// memory from each launch (flow/passes/memory_figures.h), the result's memory lines and headroom from the first.
std::vector<LaunchMemory> check_launch_logs(const CaseContext& ctx, const EvidenceOutcome& ev, const std::vector<TimedPass>& passes,
                                            RunResult& r) {
  std::vector<LaunchMemory> memory;
  for (size_t k = 0; k < passes.size(); ++k) {
    const std::string which = passes.size() > 1 ? " (launch " + std::to_string(k + 1) + ")" : "";
    auto check = check_timed_log(passes[k].log_path, ctx.signatures, &ev.signals);
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
    // A case's deployed context must fit beside its neighbours (case "headroom"): a memory check,
    // failed like an expectation, so that no golden is recorded from a run that does not fit.
    if (ctx.c.headroom)
      if (auto failure = deployed_context_failure(r.headroom, r.headroom_why_not)) r.failures.push_back(*failure);
  }
  return memory;
}

// The machine beside each launch, one value per launch (reported, never gated): how busy the rest of
// it was (golden/compare.h kOtherLoadFigure) and how fast its cores were (kReferenceFigure: one
// thread's latency chain; kThroughputFigure: multiply-adds on all its CPUs).
void add_machine_figures(const std::vector<TimedPass>& passes, RunResult& r) {
  auto add = [&](const char* name, std::optional<double> TimedPass::*value) {
    FigureResult f;
    f.name = name;
    for (const auto& p : passes)
      if (p.*value) f.samples.push_back(*(p.*value));
    if (f.samples.empty()) return;
    f.launch_medians = f.samples;
    f.summary = summarize(f.samples);
    r.figures.push_back(std::move(f));
  };
  add(kOtherLoadFigure, &TimedPass::other_load);
  add(kReferenceFigure, &TimedPass::reference_ms);
  add(kThroughputFigure, &TimedPass::throughput_ms);
}

// The timed runs' figures, answers, memory and headroom in the result. False when the runs ended
// early (request errors, interrupted): the failures then say how, with the last log's tail.
bool note_timed_runs(const CaseContext& ctx, const LaunchPlacement& at, const ServerMode& server, const EvidenceOutcome& ev,
                     const std::vector<TimedPass>& passes, RunResult& r) {
  const Case& c = ctx.c;
  const TimedPass first = passes.empty() ? TimedPass{} : passes.front();
  const TimedPass pooled = pooled_pass(passes);
  r.launches = static_cast<int>(passes.size());
  r.timed_argv = redact_argv(first.argv);
  server.note_timed(ctx, at, passes.size(), first, r);
  r.cold_first_ttft_ms = first.cold_first.ttft_s >= 0 ? first.cold_first.ttft_s * 1e3 : -1;
  r.cold_first_e2e_ms = first.cold_first.e2e_s >= 0 ? first.cold_first.e2e_s * 1e3 : -1;
  r.figures = launch_figures(c, passes);
  r.fidelity = fidelity_summary(pooled);
  r.ttft_split = ttft_split_of(pooled);
  if (!ctx.adapter.upkeep_log_regex.empty()) {  // the runtime's logged work before a prompt (runtime data)
    const Regex upkeep(ctx.adapter.upkeep_log_regex);
    std::vector<double> ms;
    for (const auto& p : passes) {
      if (p.log_path.empty()) continue;
      auto text = read_file(p.log_path);
      if (!text) continue;
      for (const RegexMatch& m : regex_find_all(*text, upkeep)) ms.push_back(std::atof(m[1].str().c_str()));
    }
    add_upkeep(r.ttft_split, ctx.adapter.upkeep_log_what, ms);
  }
  for (const auto& p : passes)
    if (p.server_gauges) {
      if (!r.server_gauges) r.server_gauges = *p.server_gauges;
      else merge_server_gauges(*r.server_gauges, *p.server_gauges);
    }
  WorkloadSummary workload = summarize_workload(ctx, pooled);
  r.workload = workload.lines;
  if (pooled.peak_rss_bytes) r.peak_rss_mib = static_cast<double>(*pooled.peak_rss_bytes) / (1024.0 * 1024.0);
  r.gpu_memory = first.gpu_memory;
  collect_answers(passes, r);
  if (server.launches_have_logs())
    for (auto& f : memory_figures(check_launch_logs(ctx, ev, passes, r))) r.figures.push_back(std::move(f));
  add_machine_figures(passes, r);
  if (!server.launches_have_logs()) r.headroom_why_not = launch_headroom(ctx, first, LogScan{}).why_not;
  if (!pooled.errors.empty() || interrupted()) {
    const TimedPass& last = passes.empty() ? first : passes.back();
    for (const auto& e : pooled.errors) r.failures.push_back("timed runs: " + e);
    if (pooled.errors.empty()) r.failures.push_back("timed runs: interrupted");
    r.failures.push_back(last.log_path.empty() ? std::string("timed runs incomplete; there is no log of the server to show (attached without a log)")
                                               : "timed runs incomplete; log " + last.log_path + " ends:\n" + log_tail(last.log_path, 10));
    return false;
  }
  for (const auto& f : workload.failures) r.failures.push_back(f);
  return true;
}

// Level 3 tie: the timed configuration, probed after each launch, must run the evidence pass's
// attention kernels; each probed launch adds its kernel families' shares to the run's kernel set,
// and its GPU kernel time per token to the low-noise figures (flow/passes/low_noise_figures.h). False
// when a probed check failed outright.
bool run_probed_checks(const CaseContext& ctx, const LaunchPlacement& run_at, const EvidenceOutcome& ev, size_t launches,
                       const RunOptions& o, RunResult& r) {
  const std::string& name = ctx.c.name;
  if (probed_check_blocker(ev).empty()) progress(o, name, "probed check: the timed configuration with the kernel probe or device timings");
  std::vector<std::string> check_texts;
  std::vector<double> gpu_per_token, attention_per_token;
  for (size_t k = 1; k <= std::max<size_t>(launches, 1); ++k) {
    LaunchPlacement at = run_at;  // the launch's folder
    at.out_dir = launch_dir(run_at.out_dir, static_cast<int>(k));
    const std::string which = launches > 1 ? " (after launch " + std::to_string(k) + ")" : "";
    auto pc = run_probed_check(ctx, at, ev);
    if (!pc) {
      r.probed_check = "failed" + which + ": " + pc.error().message;
      r.failures.push_back("probed check failed" + which + ": " + pc.error().message);
      return false;
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
    progress(o, name, "probed check" + which + ": " + (pc->mismatches.empty() ? "same attention kernels" : "attention kernels DIFFER"));
  }
  r.probed_check = check_texts.front();
  for (size_t k = 1; k < check_texts.size(); ++k) r.probed_check += "\nafter launch " + std::to_string(k + 1) + ": " + check_texts[k];
  for (auto& f : kernel_figures(gpu_per_token, attention_per_token)) r.figures.push_back(std::move(f));
  return true;
}

// What gates (kernel time first on CUDA), the minimum effects, and the guards of every figure a
// user feels that does not gate.
void apply_figure_policy(const CaseContext& ctx, RunResult& r) {
  const Case& c = ctx.c;
  for (auto& f : r.figures)
    if (!is_memory_figure(f.name)) f.min_effect = min_effect(c, f.name);  // machine.*: reported only
  const std::string gpu_gates = apply_gpu_gates(c, expects_cuda(c, ctx.gpu_backends), r.figures);
  if (!gpu_gates.empty()) r.golden_lines.push_back("gated figures: " + gpu_gates);
  for (auto& f : r.figures)
    if (!f.gate && !is_memory_figure(f.name)) f.guard = guard_effect(c, f.name);
}

GoldenCheckOptions golden_check_options(const RunOptions& o) {
  GoldenCheckOptions g;
  g.golden_root = o.golden_root;
  g.timing_root = o.timing_golden_root;
  g.results_root = o.results_root;
  g.golden_id = o.golden_fingerprint;
  g.record_missing = o.record_missing;
  g.record_missing_answers = o.record_missing_answers;
  return g;
}

// The result files and, in the default layout, the history entry (history/history.h): written last,
// so that a run that dies before leaves no result at all, never a pass. Writing is part of the result:
// an error (the path and the errno) when the result files or the history line cannot be written; the
// run is then incomplete, and the history lists only runs whose result files exist.
Status write_run(const RunOptions& o, const Fingerprint& fpr, RunResult& r, std::string& result_file) {
  r.fingerprint = fpr.to_json();
  r.not_utf8 = not_utf8_noted();
  result_file.clear();
  if (auto st = write_result_files(r.output_dir, r); !st) {
    r.complete = false;
    r.failures.push_back("the result could not be written: " + st.error().message);
    return make_error("the result could not be written: " + st.error().message);
  }
  result_file = r.output_dir + "/result.txt";
  if (!o.out_dir.empty()) return ok_status();
  auto st = record_run(o.results_root, {utc_stamp("%Y-%m-%dT%H:%M:%SZ"), r.fingerprint_id, r.case_name, r.status(), r.output_dir});
  if (st) return ok_status();
  // The result files must not say pass for a run whose history line is missing: written again as
  // incomplete, or taken away when that cannot be written either.
  const std::string why = "the history line could not be written: " + st.error().message;
  r.complete = false;
  r.failures.push_back(why);
  if (!write_result_files(r.output_dir, r)) {
    result_file.clear();
    std::error_code ec;
    fs::remove(r.output_dir + "/result.txt", ec);
    fs::remove(r.output_dir + "/result.json", ec);
  }
  return make_error(why);
}

// A log on a full disk lost what the runtime wrote after the disk filled: what is left decides nothing.
// `log_path`: the log, or the run folder that holds the logs.
std::string log_cut_short(const std::string& log_path) {
  const std::string full = log_path.empty() ? "" : disk_full_note(log_path);
  return full.empty() ? "" : "incomplete: the log could not be written (" + full + ")";
}

// The timed launches under a CPU quota (calibration: an injected slowdown); none at cpu_share 1.
Result<std::optional<CpuQuota>> calibration_quota(const RunOptions& o) {
  if (o.cpu_share >= 1) return std::optional<CpuQuota>();
  auto q = CpuQuota::create(o.cpu_share, "run");
  if (!q) return make_error("--cpu-share: " + q.error().message);
  return std::optional<CpuQuota>(std::move(*q));
}

// After the evidence pass: the timed runs, their logs, the probed checks, the figures' policy and
// the goldens. Returns the exit code.
int measure_and_compare(const CaseContext& ctx, LaunchPlacement at, const ServerMode& server, const EvidenceOutcome& ev,
                        const RunOptions& o, RunResult& r) {
  const Case& c = ctx.c;
  progress(o, c.name, "evidence: " + to_string(r.verdict.activity) + " (" + std::to_string(ev.wall_s).substr(0, 5) + " s); timed runs");
  const int launches = timed_launch_count(o, server, r.fingerprint_id, c.name);
  auto quota = calibration_quota(o);
  if (!quota) {
    r.failures.push_back(quota.error().message);
    return kRunIncomplete;
  }
  if (*quota) {
    at.cgroup_procs = (*quota)->procs_file();
    r.golden_lines.push_back("timed launches under a " + (*quota)->describe() + " (calibration: an injected slowdown)");
  }
  TimedOptions timed_options = o.timed;
  if (c.job == Job::Batch) timed_options.concurrent_rounds = true;
  timed_options.levels = true;
  auto passes = run_timed_launches(ctx, at, server, timed_options, launches, o);
  if (!passes) {
    r.failures.push_back(passes.error().message);
    return kRunIncomplete;
  }
  if (!note_timed_runs(ctx, at, server, ev, *passes, r)) return kRunIncomplete;
  if (!run_probed_checks(ctx, at, ev, passes->size(), o, r)) return kRunIncomplete;
  apply_figure_policy(ctx, r);
  for (const auto& pass : *passes)
    if (std::string cut = log_cut_short(pass.log_path); !cut.empty()) {
      r.failures.push_back("timed runs " + cut);
      return kRunIncomplete;
    }
  r.complete = true;
  compare_goldens(golden_check_options(o), r);
  server.note_golden(r);
  if (!r.complete) return kRunIncomplete;  // a golden that could not be written (flow/case_run/golden_check.h)
  return r.failures.empty() ? kRunPass : kRunFail;
}

}  // namespace

// The pipeline: resolve -> server mode (attached or launched, chosen once) -> fingerprint -> run
// folder -> evidence pass -> timed runs and their checks -> probed checks -> goldens -> result files.
CaseRun run_case_file(const std::string& case_path, const RunOptions& opts_in) {
  const RunOptions o = with_absolute_folders(opts_in);
  CaseRun run;
  clear_not_utf8_noted();  // what this run replaces goes into its result
  Progress case_progress(detect_progress_style(o.quiet), std::cerr);
  ScopedProgress progress_scope(&case_progress);
  auto fail_early = [&](int code, const std::string& msg) {
    run.exit_code = code;
    run.message = msg;
    return run;
  };
  auto resolved = judge_missing_model(resolve_run_context(case_path, o.suite, o.rehash), o.golden_root);
  if (!resolved) return fail_early(resolved.exit_code(), resolved.error().message);
  CaseContext ctx = *resolved;
  const Case& c = ctx.c;
  LaunchPlacement at;  // the run's folder (below: once the fingerprint names it), its flag value and quota
  at.flag_value = o.flag_on ? (*o.flag_on ? c.flag.on : c.flag.off) : c.flag.used();
  const std::unique_ptr<ServerMode> server = server_mode(c);
  RunResult& r = run.result;
  describe_case(ctx, at, r);

  auto fingerprint = server->fingerprint(ctx);
  if (!fingerprint) return fail_early(kRunIncomplete, fingerprint.error().message);
  Fingerprint fpr = *fingerprint;
  r.runtime_version = fpr.runtime_version;
  r.runtime_build = fpr.runtime_build;
  r.fingerprint_id = fpr.id();
  ctx.runtime_build = fpr.runtime_build;

  at.out_dir = o.out_dir.empty() ? unused_folder_name(o.results_root + "/" + fpr.id() + "/" + c.name + "/" + utc_stamp("%Y%m%dT%H%M%SZ") +
                                                      "-" + std::to_string(getpid()))
                                 : o.out_dir;
  // The folder is this run's alone until the result is written (util/run_folder.h): nothing is
  // written into one that another run holds or held.
  auto claim = claim_run_folder(at.out_dir, o.out_dir.empty() ? "" : "--out");
  if (!claim) return fail_early(kRunIncomplete, claim.error().message);
  r.output_dir = at.out_dir;
  auto finish = [&](int code) {
    run.exit_code = code;
    if (auto st = write_run(o, fpr, r, run.result_file); !st) {
      run.exit_code = kRunIncomplete;
      run.message = r.case_name + ": " + st.error().message;
    }
    return run;
  };

  progress(o, c.name, server->evidence_phase(ctx, at));
  auto ev = server->evidence_pass(ctx, at);
  if (!ev) {
    r.failures.push_back("evidence pass failed: " + ev.error().message);
    if (std::string cut = log_cut_short(at.out_dir); !cut.empty()) r.failures.push_back("evidence pass " + cut);
    return finish(kRunIncomplete);
  }
  if (std::string cut = log_cut_short(ev->log_path); !cut.empty()) {
    r.failures.push_back("evidence pass " + cut);
    return finish(kRunIncomplete);
  }
  adopt_fitted_prompts(ctx, ev->prompts);
  server->note_evidence(ctx, at, *ev, r);
  fpr.runtime_build_log = build_stated_in_log(file_head(ev->log_path, 1 << 20));
  fpr.runtime_fa_pairs = ev->log.scan.build_kernels.fa_pairs_field();
  fpr.runtime_gpu_archs = ev->log.scan.build_kernels.gpu_archs;
  r.fingerprint = fpr.to_json();  // complete now: the golden step compares and records it
  note_evidence(ctx, *ev, r);
  return finish(measure_and_compare(ctx, at, *server, *ev, o, r));
}

}  // namespace fp
