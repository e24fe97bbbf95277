#include "flow/ab/ab_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

#include "flow/ab/ab_decision.h"
#include "flow/ab/answer_differences.h"
#include "flow/ab/mechanism.h"
#include "flow/ab/sustained_phase.h"
#include "flow/paired/paired_runner.h"
#include "flow/passes/evidence_pass.h"
#include "flow/passes/figures.h"
#include "flow/passes/headroom.h"
#include "flow/passes/probed_check.h"
#include "flow/passes/progress.h"
#include "flow/passes/timed_log_check.h"
#include "flow/passes/timed_pass.h"
#include "golden/answers.h"
#include "golden/fingerprint.h"
#include "runtime/process.h"
#include "util/run_folder.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// Samples of one arm, by figure name, with each figure's direction, in order of first appearance.
struct ArmSamples {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> samples;
  std::map<std::string, bool> lower_is_better, gate;
  void add(const std::string& name, double v, bool lower, bool is_gate = false) {
    if (!std::isfinite(v)) return;
    touch(name, lower, is_gate);
    samples[name].push_back(v);
  }
  void touch(const std::string& name, bool lower, bool is_gate) {
    if (!samples.count(name)) order.push_back(name);
    samples[name];
    lower_is_better[name] = lower;
    gate[name] = gate[name] || is_gate;
  }
};

// The canonical order of figures in the report: ab_figure_names(), then anything else.
std::vector<FigureResult> to_figures(const ArmSamples& s) {
  std::vector<std::string> names = ab_figure_names();
  for (const auto& n : s.order)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::vector<FigureResult> out;
  for (const auto& n : names) {
    auto it = s.samples.find(n);
    if (it == s.samples.end() || it->second.empty()) continue;
    FigureResult f;
    f.name = n;
    f.samples = it->second;
    f.summary = summarize(it->second);
    f.lower_is_better = s.lower_is_better.at(n);
    f.gate = s.gate.at(n);
    out.push_back(std::move(f));
  }
  return out;
}

struct ArmState {
  CaseContext ctx;     // the case, its prompts fitted by the arm's evidence pass
  LaunchPlacement at;  // the arm's flag value and folder
  AbArm arm;
  ArmSamples samples;
  std::map<std::string, std::vector<std::string>> answers;  // prompt -> every answer
  CheapSignals evidence_signals;
  bool evidence_ok = false;
  std::optional<EvidenceOutcome> evidence;  // kept for the probed check
};

void run_evidence(ArmState& s, const AbRunOptions& o) {
  progress_line(o.quiet, s.ctx.c.name + " ab", "evidence pass, flag " + s.arm.name + " (" + s.at.flag_value + ")");
  auto ev = run_evidence_pass(s.ctx, s.at);
  if (!ev) {
    s.arm.errors.push_back("evidence pass: " + ev.error().message);
    return;
  }
  adopt_fitted_prompts(s.ctx, ev->prompts);
  const Verdict& v = ev->verdict;
  s.arm.evidence_argv = shown_launch(s.ctx, s.at, s.ctx.adapter.evidence_args);
  s.arm.evidence_env = ev->env;
  s.arm.verdict = v.activity;
  s.arm.verdict_backend = backends_text(v.fused_backends);
  for (int l : v.levels_used) s.arm.levels_used.push_back(v.levels[static_cast<size_t>(l - 1)].name);
  s.arm.verdict_explanation = v.explanation;
  s.arm.verdict_quotes = v.quotes;
  s.arm.verdict_as_required = verdict_as_expected(v, /*expect_fused=*/s.arm.name == "on");
  s.arm.degraded = v.degraded;
  s.evidence_signals = ev->signals;
  s.arm.evidence_signals = signals_text(ev->signals);
  s.evidence_ok = true;
  s.evidence = std::move(*ev);
}

// Level 3 tie, once per arm after its timed launches (flow/passes/probed_check.h).
void run_check(ArmState& s, const AbRunOptions& o) {
  if (!s.evidence) return;
  if (!probed_check_blocker(*s.evidence).empty()) {
    s.arm.probed_check = "not run: " + probed_check_blocker(*s.evidence);
    return;
  }
  progress_line(o.quiet, s.ctx.c.name + " ab", "probed check, flag " + s.arm.name);
  auto pc = run_probed_check(s.ctx, s.at, *s.evidence);
  if (!pc) {
    s.arm.probed_check = "failed: " + pc.error().message;
    s.arm.errors.push_back("probed check: " + pc.error().message);
    return;
  }
  s.arm.probed_check = probed_check_text(*pc);
  s.arm.probed_mismatches = pc->mismatches;
}

// Keeps one finished timed launch of an arm: its figures, answers, memory and signals.
void record_launch(ArmState& s, int index, const TimedPass& pass_in) {
  const TimedPass* pass = &pass_in;
  const CaseContext& ctx = s.ctx;
  if (!pass->errors.empty()) return;  // the engine reports them, with the block
  ++s.arm.launches;
  ArmSamples& a = s.samples;
  a.add("cold_ready_ms", pass->ready_s * 1e3, true);
  if (pass->cold_first.ttft_s >= 0) a.add("cold_first_ttft_ms", pass->cold_first.ttft_s * 1e3, true);
  if (pass->cold_first.e2e_s >= 0) a.add("cold_first_e2e_ms", pass->cold_first.e2e_s * 1e3, true);
  for (const auto& f : compute_figures(ctx.c.job, *pass)) {
    a.touch(f.name, f.lower_is_better, f.gate);
    for (double v : f.samples) a.add(f.name, v, f.lower_is_better, f.gate);
  }
  if (pass->peak_rss_bytes) a.add("host_peak_rss_mib", static_cast<double>(*pass->peak_rss_bytes) / (1024.0 * 1024.0), true);
  s.arm.gpu_memory = pass->gpu_memory;
  if (pass->cold_first.done) s.answers[pass->cold_first_prompt].push_back(pass->cold_first.text);
  for (const auto& r : pass->requests) s.answers[r.prompt_id].push_back(r.result.text);

  auto check = check_timed_log(pass->log_path, ctx.signatures, s.evidence_ok ? &s.evidence_signals : nullptr);
  if (!check) {
    s.arm.errors.push_back("launch " + std::to_string(index + 1) + " log: " + check.error().message);
    return;
  }
  for (const auto& m : check->mismatches) s.arm.signal_mismatches.push_back("launch " + std::to_string(index + 1) + ": " + m);
  const LogScan& scan = check->log.scan;
  s.arm.kv_mib_by_device = scan.kv_mib_by_device();
  s.arm.compute_mib_by_device = scan.compute_mib_by_device();
  if (auto kv = scan.kv_total()) a.add("kv_cache_mib", kv->mib, true);
  HeadroomOutcome room = launch_headroom(ctx, *pass, scan);
  s.arm.headroom = room.headroom;
  s.arm.headroom_why_not = room.why_not;
  double compute = 0;
  for (const auto& [d, v] : s.arm.compute_mib_by_device) compute += v;
  if (!s.arm.compute_mib_by_device.empty()) a.add("compute_buffer_mib", compute, true);
}

void run_sustained(ArmState& s, const SustainedOptions& so, const AbRunOptions& o) {
  const LaunchPlacement at = s.at.below("sustained");
  std::error_code ec;
  fs::create_directories(at.out_dir, ec);
  progress_line(o.quiet, s.ctx.c.name + " ab", "sustained phase, flag " + s.arm.name);
  auto pass = run_sustained_phase(s.ctx, at, so);
  if (!pass) {
    s.arm.errors.push_back("sustained phase: " + pass.error().message);
    return;
  }
  for (const auto& e : pass->errors) s.arm.errors.push_back(e);
  // A server that stopped answering is a finding about this arm (ab_decision.h), quoted with what the
  // runtime logged and how its processes stood at that moment; the requests it did answer still count.
  s.arm.sustained_stop = sustained_stop_line(*pass);
  if (pass->stopped) s.arm.sustained_stop_log = pass->stopped->log_tail;
  s.arm.sustained_sent = pass->sent;
  SustainedFigures f = sustained_figures(*pass, so.concurrency);
  s.arm.sustained_ran = true;
  s.arm.sustained_gauges = pass->server_gauges;
  s.arm.sustained_wall_s = f.wall_s;
  s.arm.sustained_requests = f.requests;
  s.arm.sustained_concurrency = so.concurrency;
  for (double v : f.ttft_ms) s.samples.add("sustained_ttft_ms", v, true);
  for (double v : f.queue_ms) s.samples.add("sustained_queue_ms", v, true);
  for (double v : f.tpot_ms) s.samples.add("sustained_tpot_ms", v, true);
  if (f.throughput_tokens_per_s >= 0) s.samples.add("sustained_throughput_tokens_per_s", f.throughput_tokens_per_s, false);
  for (const auto& d : f.drift) {
    const AbResult& c = d.first_vs_last;
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s: last %zu against first %zu requests: median %.3f -> %.3f (%+.1f%%), %s",
                  d.figure.c_str(), d.window, d.window, c.median_a, c.median_b, 100.0 * c.diff_rel,
                  c.verdict == AbVerdict::different ? "drift" : "no drift beyond noise");
    s.arm.drift_lines.push_back(buf);
  }
}

void finish_arm(ArmState& s) {
  s.arm.figures = to_figures(s.samples);
  for (const auto& [id, texts] : s.answers) {
    s.arm.answers[id] = texts.front();
    if (std::any_of(texts.begin(), texts.end(), [&](const std::string& t) { return t != texts.front(); }))
      s.arm.unstable_answers.push_back(id);
  }
}

const FigureResult* find_figure(const AbArm& a, const std::string& name) {
  for (const auto& f : a.figures)
    if (f.name == name) return &f;
  return nullptr;
}


}  // namespace

std::vector<AbFigure> compare_arms(const AbArm& off, const AbArm& on) {
  std::vector<AbFigure> out;
  for (const auto& fb : on.figures) {
    const FigureResult* fa = find_figure(off, fb.name);
    if (!fa) continue;
    AbFigure f;
    f.name = fb.name;
    f.gate = fb.gate || fa->gate;
    f.lower_is_better = fb.lower_is_better;
    f.cmp = compare_ab(fa->samples, fb.samples);
    f.effect = effect_of(f.cmp, f.lower_is_better);
    out.push_back(std::move(f));
  }
  // The off arm's order is the canonical one too; the on arm may lack a figure.
  return out;
}

std::vector<AbAnswerDiff> compare_arm_answers(const AbArm& off, const AbArm& on) {
  std::vector<AbAnswerDiff> out;
  for (const auto& [id, a] : off.answers) {
    auto it = on.answers.find(id);
    if (it == on.answers.end()) continue;
    AbAnswerDiff d;
    d.prompt_id = id;
    AnswerComparison c = compare_answer(id, a, it->second);
    d.identical = c.identical;
    d.diff = c.diff;
    // compare_answer labels its sides reference/run; here they are the two arms.
    if (starts_with(d.diff, "--- reference/")) d.diff.replace(0, 14, "--- flag-off/");
    if (auto p = d.diff.find("\n+++ run/"); p != std::string::npos) d.diff.replace(p, 9, "\n+++ flag-on/");
    auto q = d.diff.find(": reference has ");
    if (q != std::string::npos) d.diff.replace(q, 16, ": flag off has ");
    q = d.diff.find(", run has ");
    if (q != std::string::npos) d.diff.replace(q, 10, ", flag on has ");
    out.push_back(std::move(d));
  }
  return out;
}

AbOutcome run_ab(const std::string& case_path, const AbRunOptions& opts_in) {
  AbRunOptions o = opts_in;
  if (o.results_root.empty()) o.results_root = o.suite.results;
  AbOutcome out;
  auto fail_early = [&](int code, const std::string& msg) {
    out.exit_code = code;
    out.message = msg;
    return out;
  };
  auto resolved = judge_missing_model(resolve_case_context(case_path, o.suite, "", o.rehash), o.suite.golden);
  if (!resolved) return fail_early(resolved.exit_code(), resolved.error().message);
  CaseContext ctx = *resolved;
  const Case& c = ctx.c;
  const std::string sha = c.model.sha256;  // checked against the file by resolve_case_context

  AbRun& r = out.run;
  r.case_name = c.name;
  r.case_file = c.file;
  r.job = job_name(c.job);
  r.description = c.description;
  r.runtime = c.runtime;
  r.flashproof_version = FLASHPROOF_VERSION;
  r.started_utc = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
  r.model_path = c.model.path;
  r.model_sha256 = sha;
  r.repetitions = o.repetitions > 0 ? o.repetitions : c.ab.repetitions;
  r.rounds = o.rounds > 0 ? o.rounds : c.ab.rounds;
  r.warmup = o.warmup >= 0 ? o.warmup : c.ab.warmup;
  r.sustained_s = o.sustained_s >= 0 ? o.sustained_s : c.ab.sustained_s;
  r.concurrency = o.concurrency > 0 ? o.concurrency : c.ab.concurrency;

  auto fingerprint = case_fingerprint(c, ctx.adapter, ctx.runtime, sha);
  if (!fingerprint) return fail_early(kAbIncomplete, fingerprint.error().message);
  const Fingerprint& fpr = *fingerprint;
  r.runtime_version = fpr.runtime_version;
  r.runtime_build = fpr.runtime_build;
  r.fingerprint_id = fpr.id();
  const std::string dir = o.out_dir.empty() ? unused_folder_name(o.results_root + "/" + fpr.id() + "/" + c.name + "/ab-" +
                                                                     utc_stamp("%Y%m%dT%H%M%SZ") + "-" + std::to_string(getpid()))
                                            : o.out_dir;
  // This A/B's alone until its result is written (util/run_folder.h).
  auto claim = claim_run_folder(dir, o.out_dir.empty() ? "" : "--out");
  if (!claim) return fail_early(kAbIncomplete, claim.error().message);
  r.output_dir = dir;

  ArmState off, on;
  for (ArmState* s : {&on, &off}) {
    const bool is_on = s == &on;
    s->ctx = ctx;
    s->at.flag_value = is_on ? c.flag.on : c.flag.off;
    s->at.out_dir = dir + "/" + (is_on ? "on" : "off");
    // Evidence at the job's load: the sustained phase's streams when it runs and they are more.
    if (r.sustained_s > 0) s->at.load_streams = std::max(job_load_streams(ctx, LaunchPlacement{}), r.concurrency);
    s->arm.name = is_on ? "on" : "off";
    s->arm.flag_value = s->at.flag_value;
    std::error_code ec;
    fs::create_directories(s->at.out_dir, ec);
    if (ec) return fail_early(kAbIncomplete, s->at.out_dir + ": cannot create the A/B folder: " + ec.message());
    s->arm.timed_argv = shown_launch(s->ctx, s->at, ctx.adapter.timed_args);
  }

  // Evidence once per arm, then the alternating timed launches, then the sustained phases.
  run_evidence(on, o);
  run_evidence(off, o);
  // The timed launches: the side-by-side engine, A = off, B = on, blocks in pairs AB BA or BA AB at random.
  PairedPlan plan;
  plan.warmup = r.warmup;
  plan.rounds = r.rounds;
  plan.first_blocks = r.repetitions + r.repetitions % 2;
  plan.max_blocks = std::max(plan.first_blocks, o.repetitions > 0 ? plan.first_blocks : c.plan.max_blocks);
  plan.budget_s = c.plan.budget_s;
  plan.concurrent_rounds = c.job == Job::Batch;
  plan.gated = paired_gated_figures(c);
  plan.kernel_time = needs_kernel_probe(plan.gated);
  for (const auto& g : plan.gated) plan.min_effect[g] = min_effect(c, g);
  plan.quiet = o.quiet;
  PairedArm arm_off{"off", off.ctx, off.at, std::nullopt}, arm_on{"on", on.ctx, on.at, std::nullopt};
  std::map<std::string, int> launched;
  PairedOutcome paired = run_paired(arm_off, arm_on, plan, [&](const PairedArm& arm, int, const TimedPass& pass) {
    ArmState& s = arm.name == "on" ? on : off;
    record_launch(s, launched[arm.name]++, pass);
  });
  for (const auto& l : paired.launches) {
    r.order.push_back(l.arm);
    if (l.errors.empty()) continue;
    ArmState& s = l.arm == "on" ? on : off;
    for (const auto& e : l.errors) {
      const std::string line = "block " + std::to_string(l.block + 1) + ": " + e;
      if (std::find(s.arm.errors.begin(), s.arm.errors.end(), line) == s.arm.errors.end()) s.arm.errors.push_back(line);
    }
  }
  r.blocks = paired.blocks;
  r.stopped = paired.stopped;
  for (const auto& p : paired.pinning) {
    if (p.rfind("launches interleaved", 0) == 0) r.launches.push_back(p.substr(0, p.find(" (")));
    else if (p.rfind("launches ", 0) == 0) r.launches.push_back(p);
  }
  if (!interrupted()) {
    run_check(on, o);
    run_check(off, o);
  }
  if (r.sustained_s > 0 && !interrupted()) {
    SustainedOptions so{r.sustained_s, r.concurrency};
    run_sustained(on, so, o);
    run_sustained(off, so, o);
  }
  if (interrupted()) on.arm.errors.push_back(interrupted_text());
  finish_arm(on);
  finish_arm(off);
  r.on = on.arm;
  r.off = off.arm;
  r.figures = compare_arms(r.off, r.on);
  MechanismOutcome mech = check_mechanism(c.ab.mechanism, r.figures);
  r.mechanism = mech.checks;
  r.unpredicted = mech.unpredicted;
  for (auto& f : r.figures) {
    const bool stated = std::any_of(c.ab.mechanism.begin(), c.ab.mechanism.end(), [&](const auto& s) { return s.figure == f.name; });
    const bool unpredicted = std::any_of(r.unpredicted.begin(), r.unpredicted.end(),
                                         [&](const std::string& u) { return starts_with(u, f.name + ":"); });
    f.headline = f.gate || stated || unpredicted;
  }
  r.answers = compare_arm_answers(r.off, r.on);
  classify_answer_differences(off.ctx, off.at, on.ctx, on.at, r, o.quiet);
  decide_ab(c.job, paired.decisions, r);
  out.exit_code = r.exit_code;
  if (auto st = write_ab_files(dir, r); !st) {  // writing is part of the result: never a pass without ab.json
    std::cerr << "flashproof ab: incomplete: " << st.error().message << "\n";
    if (out.exit_code != kAbFail) out.exit_code = kAbIncomplete;
  }
  return out;
}

}  // namespace fp
