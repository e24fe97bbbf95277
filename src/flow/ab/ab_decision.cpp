#include "flow/ab/ab_decision.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/answer_difference_text.h"
#include "util/text.h"

namespace fp {
namespace {

// The figure by which one arm is measurably faster: a gated paired figure whose interval excludes
// zero, else the pooled end-to-end latency when it differs. Empty when neither is.
std::string faster_arm(const std::vector<FigureDecision>& paired, const AbRun& r) {
  for (const auto& d : paired) {
    const PairedEstimate& e = d.estimate;
    if (e.low_log > 0) return "the faster arm (flag off, by " + d.figure + ")";
    if (e.high_log < 0) return "the faster arm (flag on, by " + d.figure + ")";
  }
  for (const auto& f : r.figures)
    if (f.name == "e2e_ms" && f.cmp.verdict == AbVerdict::different)
      return std::string("the faster arm (flag ") + (f.effect == AbEffect::better_with_flag_on ? "on" : "off") + ", by e2e_ms)";
  return "";
}

}  // namespace

void decide_ab(Job job, const std::vector<FigureDecision>& paired, AbRun& r) {
  r.gates.clear();
  bool incomplete = !r.off.errors.empty() || !r.on.errors.empty();
  bool unresolved = false;
  for (const AbArm* a : {&r.off, &r.on}) {
    for (const auto& e : a->errors) r.failures.push_back("arm " + a->name + ": " + e);
    if (a->verdict != Activity::NoEvidence || a->errors.empty()) {
      if (!a->verdict_as_required)
        r.failures.push_back("arm " + a->name + " (" + a->flag_value + "): fused attention must be " +
                             (a->name == "on" ? "active" : "not active") + ", the evidence says " + to_string(a->verdict) +
                             (a->verdict_explanation.empty() ? "" : ": " + a->verdict_explanation) +
                             "; the A/B does not compare the flag on against off");
    }
    for (const auto& m : a->signal_mismatches)
      r.failures.push_back("arm " + a->name + ": a timed launch differs from its evidence pass: " + m);
    for (const auto& m : a->probed_mismatches)
      r.failures.push_back("arm " + a->name + ": the timed configuration, probed, differs from its evidence pass: " + m);
  }

  // A server that stopped answering under sustained load: with the flag on, the flag's
  // configuration does not serve the job (a failure); with it off, a finding about the arm the
  // flag replaces, quoted, and the decision comes from the figures both arms measured.
  r.findings.clear();
  for (const AbArm* a : {&r.off, &r.on}) {
    if (a->sustained_stop.empty()) continue;
    const std::string line = "flag " + a->name + ": " + a->sustained_stop;
    r.findings.push_back(line);
    if (a->name == "on") r.failures.push_back(line + " (the flag's configuration stopped serving under load)");
  }

  // Same system? Each difference as classified (flow/ab/answer_classification.h): a near-tie the
  // arms' measured disagreement explains is said as such; one beyond it weighs in and is a finding.
  size_t differ = 0, expected = 0, unexpected = 0;
  for (const auto& a : r.answers) {
    if (a.identical) continue;
    ++differ;
    expected += a.difference.kind == AnswerDifferenceKind::expected_near_tie;
    if (a.difference.kind != AnswerDifferenceKind::not_expected) continue;
    ++unexpected;
    r.findings.push_back("answers differ, prompt " + a.prompt_id + ": " + answer_difference_text(a.difference));
  }
  if (r.answers.empty()) {
    r.same_system = "no answers to compare";
  } else if (differ == 0) {
    r.same_system = "identical answers for all " + std::to_string(r.answers.size()) + " prompts: the same system";
  } else {
    const std::string faster = faster_arm(paired, r);
    const std::string different =
        faster.empty() ? "neither arm is measurably faster, but the two arms are different systems" : faster + " is a different system";
    const std::string head =
        std::to_string(differ) + " of " + std::to_string(r.answers.size()) + " prompts answer differently with the flag on";
    const size_t unclassified = differ - expected - unexpected;
    if (expected == differ)
      r.same_system = head +
                      ", each a near-tie within the arms' measured numerical disagreement (expected: the flag changes the "
                      "summation order): the same system but for rounding";
    else if (unexpected > 0)
      r.same_system = head + ", " + std::to_string(unexpected) +
                      " not expected (a margin beyond the arms' measured numerical disagreement): " + different;
    else
      r.same_system = head + " (" + std::to_string(unclassified) + " unclassified" +
                      (expected ? ", " + std::to_string(expected) + " expected near-ties" : std::string()) + "): " + different;
  }

  // Gates: the job's figures, paired per block and prompt, flag on (B) against off (A).
  for (const auto& d : paired) {
    AbGate g;
    g.figure = d.figure;
    g.detail = decision_line(d, "flag on");
    if (d.estimate.units == 0) {
      g.outcome = AbGateOutcome::undecided;
      g.detail = "not measured in both arms";
      incomplete = true;
    } else if (d.verdict == TimingVerdict::regression) {
      g.outcome = AbGateOutcome::fail;
      r.failures.push_back("gate " + d.figure + " is worse with the flag on: " + decision_line(d, "flag on"));
    } else if (d.verdict == TimingVerdict::no_regression) {
      g.outcome = AbGateOutcome::pass;
    } else {
      g.outcome = AbGateOutcome::undecided;
      unresolved = true;
    }
    r.gates.push_back(g);
  }
  if (job != Job::Extraction && paired.empty()) {
    r.gates.push_back({"(gate figure)", AbGateOutcome::undecided, "the job's gate figure was not measured in both arms"});
    incomplete = true;
  }
  if (job == Job::Extraction) {
    AbGate g{"answers", differ == 0 && !r.answers.empty() ? AbGateOutcome::pass : AbGateOutcome::fail, r.same_system};
    if (r.answers.empty()) g.outcome = AbGateOutcome::undecided, incomplete = true;
    if (g.outcome == AbGateOutcome::fail) r.failures.push_back("extraction: " + r.same_system);
    r.gates.push_back(g);
  }
  r.complete = !incomplete;
  r.exit_code = !r.failures.empty() && !incomplete ? 1 : incomplete ? 2 : unresolved ? 3 : 0;
  if (r.exit_code == 0)
    r.decision = "PASS: the job's gates are not worse with the flag on and the answers satisfy the " + r.job + " job" +
                 (r.findings.empty() ? "" : "; " + r.findings.front());
  else if (r.exit_code == 1)
    r.decision = "FAIL: " + r.failures.front();
  else if (r.exit_code == 3)
    r.decision = "UNRESOLVED: a gate could not be decided within the budget (plan.budget_s, plan.max_blocks); see its line";
  else
    r.decision = "INCOMPLETE: " + (r.failures.empty() ? std::string("a gate figure was not measured") : r.failures.front());
}

}  // namespace fp
