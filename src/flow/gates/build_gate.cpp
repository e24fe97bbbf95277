#include "flow/gates/build_gate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "case/prompt_set.h"
#include "figure/figure_registry.h"
#include "flow/paired/paired_memory.h"
#include "flow/paired/paired_runner.h"
#include "flow/passes/case_context.h"
#include "flow/passes/evidence_pass.h"
#include "flow/passes/gpu_probe.h"
#include "flow/passes/low_noise_figures.h"
#include "flow/passes/probed_check.h"
#include "golden/answers.h"
#include "golden/golden_file.h"
#include "golden/golden_paths.h"
#include "runtime/cpu_quota.h"
#include "runtime/process.h"
#include "util/format_number.h"
#include "util/run_folder.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;



std::string activity_text(const Verdict& v) {
  const std::string b = backends_text(v.fused_backends);
  return std::string(to_string(v.activity)) + (b.empty() ? "" : " (" + b + ")");
}

// Whether the case's fused attention is expected on a CUDA device: where the kernel probe can time it.
bool runs_on_cuda(const CaseContext& ctx) { return expects_cuda(ctx.c, ctx.gpu_backends); }

PairedPlan plan_for(const CaseContext& ctx, const BuildGateOptions& o, std::string* gated_note, const Golden* recorded) {
  const Case& c = ctx.c;
  PairedPlan p;
  p.warmup = o.warmup >= 0 ? o.warmup : c.plan.warmup;
  p.rounds = o.rounds > 0 ? o.rounds : c.plan.repetitions;
  p.first_blocks = o.blocks > 0 ? o.blocks : c.plan.blocks;
  p.max_blocks = std::max(p.first_blocks, o.max_blocks > 0 ? o.max_blocks : c.plan.max_blocks);
  p.budget_s = o.budget_s > 0 ? o.budget_s : c.plan.budget_s;
  p.concurrent_rounds = c.job == Job::Batch;
  const bool cuda = runs_on_cuda(ctx);
  const GatedFigures g = gated_figures(c, cuda, cuda && c.plan.gated.empty() && plan_gpu_probe("").attached, recorded);
  p.gated = g.figures;
  p.min_effect = g.min_effect;
  p.guards = g.guards;
  *gated_note = g.note;
  p.kernel_time = needs_kernel_probe(p.gated);
  // --min-effect FIGURE=FRACTION[:FLOOR]: the relative part, and the floor where given (else the
  // case's or the default floor stays).
  for (const auto& [given, v] : o.min_effect) {
    const std::string f = gated_figure_name(given);  // an old name reads as the figure it names today (figure_registry.h)
    auto it = p.min_effect.find(f);
    MinEffect e = it != p.min_effect.end() ? it->second : min_effect(c, f);
    e.relative = v.relative;
    if (std::isfinite(v.floor)) e.floor = v.floor;
    p.min_effect[f] = e;
  }
  p.quiet = o.quiet;
  p.runtime_cpus = o.runtime_cpus;
  p.interleave = !o.one_at_a_time;
  apply_decode_probes(p, ctx.adapter.decode_probe.has_value(), o.decode_probes);
  return p;
}

std::vector<std::string> problem_texts(const std::vector<GateProblem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.text);
  return out;
}

nlohmann::json decision_json(const FigureDecision& d) {
  const PairedEstimate& e = d.estimate;
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"figure", d.figure},
                      {"verdict", to_string(d.verdict)},
                      {"worse_rel", num(e.worse_rel())},
                      {"ci_low_rel", num(e.low_rel())},
                      {"ci_high_rel", num(e.high_rel())},
                      {"upper_rel", num(std::expm1(d.upper_log))},
                      {"alpha_regression", num(d.alpha_regression)},
                      {"alpha_no_regression", num(d.alpha_no_regression)},
                      {"p_holm", num(d.p_holm)},
                      {"blocks", e.blocks},
                      {"units", e.units},
                      {"df", e.df},
                      {"block_sd_log", num(e.block_sd_log)},
                      {"order_effect_rel", num(std::expm1(e.order_log))},
                      {"machine_slower_rel", num(std::expm1(e.machine_log))},
                      {"min_effect", d.min_effect},
                      {"p_regression", num(d.p_regression)},
                      {"why", d.why}};
  if (d.likely_blocks) j["likely_blocks"] = *d.likely_blocks;
  j["block_values"] = nlohmann::json::array();
  for (const auto& b : e.block_values) {
    j["block_values"].push_back({{"block", b.block + 1},
                                 {"baseline_first", b.a_first},
                                 {"worse_rel", num(std::expm1(b.d))},
                                 {"residual_log", num(b.residual)},
                                 {"baseline", num(b.a)},
                                 {"candidate", num(b.b)}});
    if (std::isfinite(b.machine)) j["block_values"].back()["machine_slower_rel"] = std::expm1(b.machine);
  }
  return j;
}

// The two arms of a case: the baseline's runtime and the candidate's (the one resolved), each
// with its fingerprint, folder and calibration quota.
struct GateArms {
  CaseContext base, cand;
  LaunchPlacement at_base, at_cand;  // their folders (baseline/, candidate/) and quotas
  Fingerprint fp_base, fp_cand;
  std::string dir;  // the case's gate folder: baseline/ and candidate/ below it
  std::optional<CpuQuota> quota_base, quota_cand;
};

// The arms' runtimes and fingerprints, printed with what changed between them.
Status fingerprint_arms(const Case& c, const BuildGateOptions& o, GateArms& arms, TeeText& say) {
  auto base_rt = runtime_from_path(o.baseline_runtime, arms.base.adapter);
  if (!base_rt) return make_error("--baseline-runtime: " + base_rt.error().message);
  arms.base.runtime = *base_rt;
  auto fp_base = case_fingerprint(c, arms.base.adapter, arms.base.runtime, c.model.sha256);
  if (!fp_base) return make_error("baseline: " + fp_base.error().message);
  auto fp_cand = case_fingerprint(c, arms.cand.adapter, arms.cand.runtime, c.model.sha256);
  if (!fp_cand) return make_error("candidate: " + fp_cand.error().message);
  arms.fp_base = *fp_base;
  arms.fp_cand = *fp_cand;
  say("baseline:  " + join(arms.base.runtime.prefix, " ") + "\n           " + fp_base->runtime_version + "\n");
  say("candidate: " + join(arms.cand.runtime.prefix, " ") + " (" + arms.cand.runtime.how_found + ")\n           " +
      fp_cand->runtime_version + "\n");
  const auto changes = fingerprint_changes(*fp_base, *fp_cand);
  say("what changed (baseline -> candidate):\n" +
      (changes.empty() ? std::string("  no fingerprint field: the same version on both sides (files may still differ)\n")
                       : describe_changes(changes)));
  return ok_status();
}

// The gate's folders and the arms' calibration: CPU quotas, the candidate's longer prompts.
Status prepare_arms(const Case& c, const BuildGateOptions& o, GateArms& arms, TeeText& say) {
  for (const auto* d : {&arms.at_base.out_dir, &arms.at_cand.out_dir}) {
    std::error_code ec;
    fs::create_directories(*d, ec);
    if (ec) return make_error(*d + ": cannot create the gate's folder: " + ec.message());
  }
  for (auto [share, at, quota, name] : {std::make_tuple(o.baseline_cpu_share, &arms.at_base, &arms.quota_base, "baseline"),
                                        std::make_tuple(o.candidate_cpu_share, &arms.at_cand, &arms.quota_cand, "candidate")}) {
    if (share >= 1) continue;
    auto q = CpuQuota::create(share, name);
    if (!q) return make_error(std::string(name) + " CPU quota: " + q.error().message);
    *quota = std::move(*q);
    at->cgroup_procs = (*quota)->procs_file();
    say(std::string(name) + " timed launches under a " + (*quota)->describe() + " (calibration: an injected slowdown)\n");
  }
  if (o.candidate_prompt_scale == 1) return ok_status();
  if (!c.shape.long_prompt)
    return make_error("--candidate-prompt-scale needs a case with shape.long_prompt (" + c.file + " has none)");
  LongPrompt longer = *c.shape.long_prompt;
  longer.chars = static_cast<size_t>(std::llround(static_cast<double>(longer.chars) * o.candidate_prompt_scale));
  auto prompts = load_prompt_set(o.suite, c.shape.prompt_set, longer);
  if (!prompts) return make_error("--candidate-prompt-scale: " + prompts.error().message);
  arms.cand.prompts = *prompts;
  say("candidate prompts " + fmt("%.3f", o.candidate_prompt_scale) + " x longer (" + std::to_string(c.shape.long_prompt->chars) +
      " -> " + std::to_string(longer.chars) + " characters of document; calibration: an injected slowdown; answers not compared)\n");
  return ok_status();
}

// The evidence passes of both arms compared: the candidate's verdict as expected, no level lost, the
// same attention kernel families, the same verdict on the same devices. Problems into `problems`.
void compare_evidence(const Case& c, const EvidenceOutcome& ev_base, const EvidenceOutcome& ev_cand, TeeText& say,
                      std::vector<GateProblem>& problems) {
  say("  baseline:  " + activity_text(ev_base.verdict) + "\n  candidate: " + activity_text(ev_cand.verdict) + "\n");
  if (!verdict_as_expected(ev_cand.verdict, c.expect.fused_attention))
    problems.push_back({GateProblemKind::kernel_lost, std::string("LOST: fused attention is ") + to_string(ev_cand.verdict.activity) +
                                                          " in the candidate (the case expects it " +
                                                          (c.expect.fused_attention ? "active" : "not active") +
                                                          "): " + ev_cand.verdict.explanation});
  // A level that gave evidence in the old build and nothing in the new one (a changed log format, a
  // probe the new build refuses) is evidence lost, even when the verdict still reads the same.
  const auto level_names = [](const Verdict& v) {
    std::vector<std::string> names;
    for (int l : v.levels_used) names.push_back(v.levels[static_cast<size_t>(l - 1)].name);
    return names;
  };
  for (const auto& lost : evidence_lost(level_names(ev_base.verdict), level_names(ev_cand.verdict),
                                        ev_cand.verdict.levels_unavailable, "with the baseline", "with the candidate"))
    problems.push_back({GateProblemKind::evidence_lost, lost});
  // The attention kernel set, family by family (golden/kernel_families.h): one evidence pass per arm
  // resolves no share move within noise, but a family lost or new is a swap.
  if (ev_base.kernels && ev_cand.kernels) {
    std::vector<FamilySamples> fam_base, fam_cand;
    std::vector<std::string> launches;
    add_kernel_launch(fam_base, launches, family_shares(*ev_base.kernels), "baseline evidence pass");
    add_kernel_launch(fam_cand, launches, family_shares(*ev_cand.kernels), "candidate evidence pass");
    if (!fam_base.empty() && !fam_cand.empty()) {
      const KernelFamilyComparison kc = compare_kernel_families(golden_kernel_families(fam_base), fam_cand);
      say("  attention kernel families (baseline -> candidate):\n");
      for (const auto& l : kc.lines()) say("    " + l + "\n");
      for (const auto& f : kc.failures()) problems.push_back({GateProblemKind::kernel_set_changed, f});
    }
  }
  if (ev_base.verdict.activity != ev_cand.verdict.activity)
    problems.push_back(
        {GateProblemKind::verdict_changed, "verdict changed: " + activity_text(ev_base.verdict) + " -> " + activity_text(ev_cand.verdict)});
  else if (fused_devices_differ(ev_base.verdict.fused_backends, ev_cand.verdict.fused_backends))
    problems.push_back({GateProblemKind::fused_moved,
                        "fused attention moved: " + activity_text(ev_base.verdict) + " -> " + activity_text(ev_cand.verdict)});
}

// "4, 6, 8, 12, ... 192, each at one-sided 0.21%".
std::string looks_text(const LookSchedule& s) {
  std::string t;
  for (size_t i = 0; i < s.looks.size(); ++i) {
    if (i == 4 && s.looks.size() > 6) {
      t += ", ...";
      i = s.looks.size() - 1;
    }
    t += (t.empty() ? "" : ", ") + std::to_string(s.looks[i]);
  }
  return t + " (each at one-sided " + fmt("%.2g", 100 * s.alpha_regression) + "% for a regression, " +
         fmt("%.2g", 100 * s.alpha_no_regression) + "% for none)";
}

void say_plan(const PairedPlan& plan, size_t prompts, TeeText& say) {
  say("timed blocks: in pairs, AB then BA or BA then AB at random, " + std::to_string(plan.rounds) + " round(s) of " +
      std::to_string(prompts) + " prompts per launch after " + std::to_string(plan.warmup) + " warm-up" +
      (plan.decode_probes > 0
           ? ", each measured request followed by " + std::to_string(plan.decode_probes) +
                 " decode probe(s) (the prompt again from the runtime's prompt cache; itl_mean_ms from them" +
                 (plan.guards.count("itl_requests_ms") ? "; the full requests' decode guarded as itl_requests_ms" : std::string()) + ")"
           : std::string()) +
      (plan.interleave ? "; from block 2 both launches up at once, their requests in turn, where both fit" : "; one launch at a time") +
      "; looks after " + std::to_string(first_look(plan.first_blocks)) +
      " blocks, then 6, 8, 12, 16, 24, 32, ... and at the budget's last block, each at one-sided " + fmt("%.3g", 100 * kAlphaRegression) +
      "% (a regression) and " + fmt("%.3g", 100 * kAlphaNoRegression) + "% (none) over the number of looks (docs/gate-design.md), budget " +
      (plan.budget_s > 0 ? std::to_string(static_cast<int>(plan.budget_s)) + " s"
                         : std::to_string(plan.budget_blocks) + " blocks or " + fmt("%.0f", plan.budget_floor_s) +
                               " s, whichever is longer (the default: in seconds from the first look's block time)") +
      "\n");
}

// The blocks run, the budget's forecast, and each gated figure's and guard's decision.
void say_blocks(const PairedOutcome& po, const PairedPlan& plan, const Case& c, const std::string& gated_note, TeeText& say) {
  say("blocks: " + std::to_string(po.blocks) + " in " + fmt("%.0f", po.wall_s) + " s (" + po.stopped + "); order seed " +
      std::to_string(po.order_seed) + "\n");
  if (po.schedule) say("  looks at " + looks_text(*po.schedule) + " blocks; " + std::to_string(po.looks) + " taken\n");
  if (po.block_s > 0) {
    const int first = first_look(plan.first_blocks);
    std::string f = "  budget " + fmt("%.0f", po.budget_s) + " s at " + fmt("%.1f", po.block_s) + " s per block; at the first look (" +
                    std::to_string(first) + " blocks) ";
    if (po.first_forecast && *po.first_forecast <= first)
      f += "every gated figure was decided";
    else if (po.first_forecast) f += "a decision likely needed about " + std::to_string(*po.first_forecast) + " blocks (about " +
                                     fmt("%.0f", *po.first_forecast * po.block_s) + " s)";
    else f += "no number of blocks was likely to decide at its estimate";
    say(f + "\n");
  }
  for (const auto& p : po.pinning) say("  " + p + "\n");
  say("gated figures (" + gated_note + "; candidate against baseline, paired per block and prompt):\n");
  if (po.decisions.empty()) say("  none: the " + std::string(job_name(c.job)) + " job gates on its answers only\n");
  for (const auto& d : po.decisions) say("  " + decision_line(d, "candidate") + "\n");
  if (!po.guards.empty()) {
    const bool requests_guard = std::any_of(po.guards.begin(), po.guards.end(), [](const FigureDecision& d) { return d.figure == "itl_requests_ms"; });
    say(std::string("guards (figures a user feels that the job does not gate, each at its guard effect") +
        (requests_guard
             ? "; itl_requests_ms: the full requests' decode, itl_mean_ms coming from the probes, at itl_mean_ms's minimum effect"
             : "") +
        "):\n");
    for (const auto& d : po.guards) say("  guard " + decision_line(d, "candidate") + "\n");
  }
}

// Memory (the memory policy), then the figures reported and not gated.
void say_memory_and_reported(const PairedOutcome& po, const PairedMemory& memory, TeeText& say) {
  if (!memory.judgements.empty() || !memory.only_one_arm.empty()) {
    say("memory (median of each build's launches; golden/memory_policy.h):\n");
    for (const auto& j : memory.judgements) say("  " + j.message + "\n");
    for (const auto& f : memory.only_one_arm) say("  " + f + ": measured in one build only\n");
  }
  say("reported, not gated:\n");
  for (const auto& d : po.reported) {
    const PairedEstimate& e = d.estimate;
    say("  " + d.figure + ": candidate " + (e.worse_log > 0 ? "worse" : "better") + " by " +
        fmt("%+.1f%%", 100 * e.worse_rel()) + " (95% CI " + fmt("%+.1f%%", 100 * e.low_rel()) + " .. " +
        fmt("%+.1f%%", 100 * e.high_rel()) + ", " + std::to_string(e.blocks) + " blocks)\n");
  }
}

// Answers, prompt by prompt: the two builds must answer alike (not compared when the candidate
// answered longer prompts).
void compare_gate_answers(const PairedOutcome& po, const BuildGateOptions& o, TeeText& say, std::vector<GateProblem>& problems) {
  size_t same = 0;
  std::vector<std::string> diffs;
  for (const auto& [id, a] : po.answers_a) {
    auto it = po.answers_b.find(id);
    if (it == po.answers_b.end()) continue;
    AnswerComparison cmp = compare_answer(id, a, it->second);
    if (cmp.identical) ++same;
    else diffs.push_back(cmp.diff);
  }
  if (o.candidate_prompt_scale != 1) {
    diffs.clear();
    say("answers: not compared (the candidate answered longer prompts: calibration)\n");
  } else {
    say("answers: " + std::to_string(same) + "/" + std::to_string(po.answers_a.size()) + " identical\n");
  }
  for (const auto& d : diffs) say(d + (ends_with(d, "\n") ? "" : "\n"));
  if (!diffs.empty())
    problems.push_back({GateProblemKind::answers_changed, "answers changed: " + std::to_string(diffs.size()) + " of " +
                                                              std::to_string(po.answers_a.size()) +
                                                              " prompts answer differently in the candidate"});
}

// The case's outcome from its problems and decisions; an unresolved figure says what would decide it.
void decide_outcome(const PairedOutcome& po, BuildGateCase& bc) {
  const bool incomplete = !po.errors.empty() || interrupted();
  const bool hard_fail = std::any_of(bc.problems.begin(), bc.problems.end(), [](const GateProblem& p) { return is_regression(p.kind); });
  if (hard_fail)
    bc.outcome = GateOutcome::regression;
  else if (incomplete || !bc.problems.empty())
    bc.outcome = GateOutcome::incomplete;
  else if (po.any_unresolved())
    bc.outcome = GateOutcome::unresolved;
  else
    bc.outcome = GateOutcome::no_regression;
  if (bc.outcome != GateOutcome::unresolved) return;
  for (const auto& d : po.decisions)
    if (d.verdict == TimingVerdict::unresolved)
      bc.problems.push_back(
          {GateProblemKind::unresolved,
           "UNRESOLVED " + d.figure +
               (d.likely_blocks ? ": about " + std::to_string(*d.likely_blocks - static_cast<int>(d.estimate.blocks)) +
                                      " more blocks; a budget of about " + fmt("%.0f", *d.likely_blocks * po.block_s) +
                                      " s would likely decide it (plan.budget_s or --budget)"
                                : std::string(": no look up to plan.max_blocks is likely to decide it at its estimate"))});
}

// gate.json: the outcome, both arms, every decision and launch (so that the decision can be
// recomputed and the method checked offline).
nlohmann::json gate_json(const Case& c, const GateArms& arms, const EvidenceOutcome& ev_base, const EvidenceOutcome& ev_cand,
                         const PairedOutcome& po, const PairedMemory& memory, const std::string& gated_note, const BuildGateCase& bc) {
  nlohmann::json j = {{"case", c.name},
                      {"outcome", to_string(bc.outcome)},
                      {"baseline",
                       {{"runtime", join(arms.base.runtime.prefix, " ")},
                        {"version", arms.fp_base.runtime_version},
                        {"verdict", activity_text(ev_base.verdict)}}},
                      {"candidate",
                       {{"runtime", join(arms.cand.runtime.prefix, " ")},
                        {"version", arms.fp_cand.runtime_version},
                        {"verdict", activity_text(ev_cand.verdict)}}},
                      {"blocks", po.blocks},
                      {"wall_s", po.wall_s},
                      {"stopped", po.stopped},
                      {"budget_s", po.budget_s},
                      {"order_seed", std::to_string(po.order_seed)},
                      {"block_s", po.block_s},
                      {"looks", po.looks},
                      {"pinning", po.pinning},
                      {"gated_by", gated_note},
                      {"gated", nlohmann::json::array()},
                      {"guards", nlohmann::json::array()},
                      {"reported", nlohmann::json::array()},
                      {"problems", problem_texts(bc.problems)}};
  for (const auto& d : po.decisions) j["gated"].push_back(decision_json(d));
  j["memory"] = nlohmann::json::array();
  for (size_t i = 0; i < memory.judgements.size(); ++i) {
    const MemoryJudgement& m = memory.judgements[i];
    j["memory"].push_back({{"figure", memory.figures[i]}, {"status", to_string(m.status)}, {"baseline_mib", m.before},
                           {"candidate_mib", m.after}, {"tolerance_mib", m.tolerance}});
  }
  if (memory.kv_moved) j["kv_cache_moved"] = *memory.kv_moved;
  for (const auto& d : po.guards) j["guards"].push_back(decision_json(d));
  j["launches"] = nlohmann::json::array();
  for (const auto& l : po.launches) {
    j["launches"].push_back({{"block", l.block + 1}, {"arm", l.arm}, {"wall_s", l.wall_s}, {"interleaved", l.interleaved}, {"units", l.units},
                             {"itl_per_prompt_ms", l.itl_per_prompt_ms}, {"errors", l.errors}});
    if (l.first) j["launches"].back()["first"] = *l.first;
    if (l.itl_gap_median_ms) j["launches"].back()["itl_gap_median_ms"] = *l.itl_gap_median_ms;
    if (l.itl_requests_ms) j["launches"].back()["itl_requests_ms"] = *l.itl_requests_ms;
    if (l.reference_ms) j["launches"].back()["machine_reference_ms"] = *l.reference_ms;
    if (l.throughput_ms) j["launches"].back()["machine_throughput_ms"] = *l.throughput_ms;
    if (!l.throughput_samples_ms.empty()) j["launches"].back()["machine_throughput_samples_ms"] = l.throughput_samples_ms;
  }
  for (const auto& d : po.reported) j["reported"].push_back(decision_json(d));
  return j;
}

// The timed blocks of both arms and everything judged from them, printed; problems into bc. Then
// the outcome and gate.json.
void time_and_judge(const CaseContext& resolved, const GateArms& arms, const EvidenceOutcome& ev_base, const EvidenceOutcome& ev_cand,
                    const BuildGateOptions& o, TeeText& say, BuildGateCase& bc) {
  const Case& c = resolved.c;
  std::string gated_note;
  // The case's golden on this machine, for the baseline build: the spread it recorded sizes the
  // host-clock figures' minimum effect on CUDA (flow/passes/gated_figures.h).
  std::optional<Golden> recorded;
  if (const GoldenPaths gp = golden_paths(o.suite.golden, arms.fp_base.id(), c.name); std::filesystem::exists(gp.golden_file))
    if (auto g = load_golden(gp.golden_file)) recorded = *g;
  const PairedPlan plan = plan_for(resolved, o, &gated_note, recorded ? &*recorded : nullptr);
  say_plan(plan, resolved.prompts.size(), say);
  if (o.decode_probes > 0 && plan.decode_probes == 0)
    say("  no decode probes (--decode-probes " + std::to_string(o.decode_probes) + "): " +
        (resolved.adapter.decode_probe
             ? std::string("a batch case's requests are all in flight at once, and a probe follows one request alone")
             : "the runtime data of " + c.runtime + " has no decode_probe (how to ask it for a prompt from its cache)") +
        "; itl_mean_ms from the full requests\n");
  PairedArm A{"baseline", arms.base, arms.at_base, ev_base.signals};
  PairedArm B{"candidate", arms.cand, arms.at_cand, ev_cand.signals};
  PairedOutcome po = run_paired(A, B, plan);
  say_blocks(po, plan, c, gated_note, say);
  const PairedMemory memory = compare_paired_memory(po);
  say_memory_and_reported(po, memory, say);
  for (const auto& e : po.errors) bc.problems.push_back({GateProblemKind::launch_failed, e});
  for (const auto& l : po.launches)
    for (const auto& m : l.signal_mismatches)
      bc.problems.push_back({GateProblemKind::signals_differ,
                             l.arm + " launch in block " + std::to_string(l.block + 1) + " differs from its evidence pass: " + m});
  for (const auto& u : po.unstable)
    bc.problems.push_back({GateProblemKind::answer_unstable, "answer changed between launches of one build: " + u});
  for (const auto& f : memory.failures()) bc.problems.push_back({GateProblemKind::memory, f});
  compare_gate_answers(po, o, say, bc.problems);
  for (const auto& d : po.decisions)
    if (d.verdict == TimingVerdict::regression)
      bc.problems.push_back({GateProblemKind::regression, "REGRESSION " + decision_line(d, "candidate")});
  for (const auto& d : po.guards)
    if (d.verdict == TimingVerdict::regression)
      bc.problems.push_back(
          {GateProblemKind::regression,
           "REGRESSION (guard: " +
               (d.figure == "itl_requests_ms" ? std::string("the full requests' decode, where itl_mean_ms comes from the probes,")
                                              : "the job does not gate " + d.figure + ", and it") +
               " regressed beyond its guard effect) " + decision_line(d, "candidate")});
  decide_outcome(po, bc);
  for (const auto& p : bc.problems) say("  PROBLEM " + p.text + "\n");
  say("case " + c.name + ": " + to_string(bc.outcome) + "\n");
  const nlohmann::json j = gate_json(c, arms, ev_base, ev_cand, po, memory, gated_note, bc);
  if (auto st = write_file_atomic(arms.dir + "/gate.json", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"); !st) {
    // Writing is part of the result: a gate whose record is lost says no "no regression".
    bc.problems.push_back({GateProblemKind::not_written, "gate.json could not be written: " + st.error().message});
    if (bc.outcome != GateOutcome::regression) bc.outcome = GateOutcome::incomplete;
    say("  PROBLEM " + bc.problems.back().text + "\ncase " + c.name + ": " + to_string(bc.outcome) + "\n");
  }
}

// One case, printed as it goes; returns its outcome. The pipeline: resolve -> the arms (runtimes,
// fingerprints, folders, calibration) -> one evidence pass per arm, compared -> the timed blocks,
// judged -> gate.json.
BuildGateCase gate_case(const std::string& path, const BuildGateOptions& o, TeeText& say) {
  BuildGateCase bc;
  bc.case_path = path;
  auto resolved = judge_missing_model(resolve_case_context(path, o.suite, o.candidate_runtime, o.rehash), o.suite.golden);
  if (!resolved) {
    bc.outcome = resolved.exit_code() == kResolveSkip ? GateOutcome::skipped : GateOutcome::incomplete;
    bc.problems.push_back({GateProblemKind::setup, resolved.error().message});
    say("\n== " + path + ": " + to_string(bc.outcome) + ": " + resolved.error().message + "\n");
    return bc;
  }
  const Case& c = resolved->c;
  bc.case_name = c.name;
  say("\n== " + c.name + " (" + job_name(c.job) + ")\n");
  if (c.self_test) {
    bc.outcome = GateOutcome::skipped;
    bc.problems.push_back({GateProblemKind::setup, "self-test case (flashproof must fail it): not part of the gate"});
    say("  skipped: " + bc.problems.back().text + "\n");
    return bc;
  }
  auto fail = [&](const std::string& why) {
    bc.outcome = GateOutcome::incomplete;
    bc.problems.push_back({GateProblemKind::setup, why});
    say("  INCOMPLETE: " + why + "\n");
    return bc;
  };
  GateArms arms{*resolved, *resolved, {}, {}, {}, {}, "", {}, {}};
  if (auto st = fingerprint_arms(c, o, arms, say); !st) return fail(st.error().message);
  arms.dir = unused_folder_name((o.results_root.empty() ? o.suite.results : o.results_root) + "/" + arms.fp_cand.id() + "/" +
                                c.name + "/gate-" + utc_stamp("%Y%m%dT%H%M%SZ") + "-" + std::to_string(::getpid()));
  auto claim = claim_run_folder(arms.dir, "");  // this gate's alone (util/run_folder.h)
  if (!claim) return fail(claim.error().message);
  bc.result_dir = arms.dir;
  arms.at_base = case_placement(arms.base, arms.dir + "/baseline");
  arms.at_cand = case_placement(arms.cand, arms.dir + "/candidate");
  if (auto st = prepare_arms(c, o, arms, say); !st) return fail(st.error().message);

  say("evidence pass: baseline, candidate\n");
  auto ev_base = run_evidence_pass(arms.base, arms.at_base);
  auto ev_cand = run_evidence_pass(arms.cand, arms.at_cand);
  if (!ev_base) return fail("baseline evidence pass: " + ev_base.error().message);
  if (!ev_cand) return fail("candidate evidence pass: " + ev_cand.error().message);
  adopt_fitted_prompts(arms.base, ev_base->prompts);
  adopt_fitted_prompts(arms.cand, ev_cand->prompts);
  compare_evidence(c, *ev_base, *ev_cand, say, bc.problems);
  time_and_judge(*resolved, arms, *ev_base, *ev_cand, o, say, bc);
  return bc;
}

}  // namespace

const char* to_string(GateOutcome o) {
  switch (o) {
    case GateOutcome::no_regression: return "no regression";
    case GateOutcome::regression: return "regression";
    case GateOutcome::unresolved: return "unresolved";
    case GateOutcome::incomplete: return "incomplete";
    case GateOutcome::skipped: return "skipped";
  }
  return "incomplete";
}

bool is_regression(GateProblemKind k) {
  switch (k) {
    case GateProblemKind::kernel_lost:
    case GateProblemKind::evidence_lost:
    case GateProblemKind::kernel_set_changed:
    case GateProblemKind::verdict_changed:
    case GateProblemKind::fused_moved:
    case GateProblemKind::memory:
    case GateProblemKind::answers_changed:
    case GateProblemKind::regression: return true;
    case GateProblemKind::launch_failed:
    case GateProblemKind::signals_differ:
    case GateProblemKind::answer_unstable:
    case GateProblemKind::unresolved:
    case GateProblemKind::not_written:
    case GateProblemKind::setup: return false;
  }
  return false;
}

BuildGateReport run_build_gate(const std::vector<std::string>& case_paths, const BuildGateOptions& o, std::ostream& out) {
  BuildGateReport report;
  TeeText say{out, ""};
  say("side-by-side gate: baseline " + o.baseline_runtime + ", candidate " +
      (o.candidate_runtime.empty() ? std::string("the runtime the cases use now") : o.candidate_runtime) + "\n");
  for (const auto& path : case_paths) {
    if (interrupted()) break;
    report.cases.push_back(gate_case(path, o, say));
  }
  size_t reg = 0, unres = 0, inc = 0, ok = 0, skip = 0;
  say("\nside-by-side gate summary:\n");
  for (const auto& bc : report.cases) {
    switch (bc.outcome) {
      case GateOutcome::regression: ++reg; break;
      case GateOutcome::unresolved: ++unres; break;
      case GateOutcome::no_regression: ++ok; break;
      case GateOutcome::skipped: ++skip; break;
      case GateOutcome::incomplete: ++inc; break;
    }
    std::string why = bc.problems.empty() ? "" : ": " + bc.problems.front().text.substr(0, bc.problems.front().text.find('\n'));
    if (bc.problems.size() > 1) why += " (+" + std::to_string(bc.problems.size() - 1) + " more)";
    say("  " + (bc.case_name.empty() ? bc.case_path : bc.case_name) + "  " + to_string(bc.outcome) + why +
        (bc.result_dir.empty() ? "" : "\n      " + bc.result_dir) + "\n");
  }
  report.exit_code = reg ? kGateRegression : inc ? kGateIncomplete : unres ? kGateUnresolved : ok ? kGateNoRegression : kGateSkipped;
  const char* word = report.exit_code == kGateRegression ? "REGRESSION"
                     : report.exit_code == kGateIncomplete ? "INCOMPLETE"
                     : report.exit_code == kGateUnresolved ? "UNRESOLVED"
                     : report.exit_code == kGateNoRegression ? "NO REGRESSION"
                                                             : "SKIPPED";
  say(std::string("side-by-side gate: ") + word + " (" + std::to_string(ok) + " no regression, " + std::to_string(reg) +
      " regression, " + std::to_string(unres) + " unresolved, " + std::to_string(inc) + " incomplete, " +
      std::to_string(skip) + " skipped); exit " + std::to_string(report.exit_code) + "\n");
  for (const auto& bc : report.cases)
    if (!bc.result_dir.empty()) {
      if (auto st = write_file_atomic(bc.result_dir + "/gate.txt", say.text); !st) {
        out << "side-by-side gate: INCOMPLETE: " << st.error().message << "\n";
        if (report.exit_code != kGateRegression) report.exit_code = kGateIncomplete;
      }
    }
  report.text = say.text;
  return report;
}

}  // namespace fp
