#include "report/result_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "golden/answers.h"
#include "golden/memory_policy.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

std::string signed_num(double v, const char* suffix = "") {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.3f%s", v, suffix);
  return buf;
}

bool all_finite_nonempty(const std::vector<double>& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// The figure's status under the golden rule (golden/threshold_policy.h), the old run's launch
// medians standing in for the golden's: one launch each side resolves nothing beyond the minimum
// effect (within_noise), as a one-launch golden would not.
std::string judge_figure(const FigureResult& old_f, const FigureResult& new_f, const FigurePolicy* policy) {
  if (!policy || !all_finite_nonempty(old_f.launch_medians) || !all_finite_nonempty(new_f.launch_medians)) return "not judged";
  if (is_memory_figure(old_f.name) && !old_f.launch_medians.empty() && !new_f.launch_medians.empty()) {
    const MemoryStatus m = judge_memory(old_f.name, median(old_f.launch_medians), median(new_f.launch_medians)).status;
    return m == MemoryStatus::grew ? "regressed" : m == MemoryStatus::dropped ? "improved" : "pass";
  }
  return to_string(judge_change(*policy, launch_spread(old_f.launch_medians), launch_spread(new_f.launch_medians)).status);
}

// What a probed check's text says, without its GPU times per token and load (which differ run to run):
// identical, differs, not run, or the text when it failed.
std::string probed_check_state(const std::string& text) {
  if (starts_with(text, "attention kernels identical") || starts_with(text, "attention path identical")) return "identical";
  if (starts_with(text, "attention kernels DIFFER")) return "differs";
  if (starts_with(text, "not run")) return "not run";
  return text;
}

}  // namespace

bool ResultDiff::regressed() const {
  return std::any_of(figures.begin(), figures.end(), [](const FigureDiff& f) {
    return f.gate && (f.status == "regressed" || f.status == "removed" || f.status == "missing");
  });
}

ResultDiff diff_results(const RunResult& o, const RunResult& n, const std::map<std::string, FigurePolicy>& policies) {
  ResultDiff d;
  d.case_name = n.case_name;
  d.old_path = o.output_dir;
  d.new_path = n.output_dir;
  d.old_status = o.status();
  d.new_status = n.status();
  if (o.case_name != n.case_name) d.verdict_changes.push_back("case: " + o.case_name + " -> " + n.case_name);
  if (verdict_text(o.verdict) != verdict_text(n.verdict))
    d.verdict_changes.push_back("verdict: " + verdict_text(o.verdict) + " -> " + verdict_text(n.verdict));
  if (o.verdict.as_expected != n.verdict.as_expected)
    d.verdict_changes.push_back(std::string("verdict as expected: ") + (o.verdict.as_expected ? "yes" : "no") + " -> " +
                                (n.verdict.as_expected ? "yes" : "no"));
  if (join(o.verdict.levels_used, ", ") != join(n.verdict.levels_used, ", ") && !o.verdict.levels_used.empty())
    d.verdict_changes.push_back("evidence levels: " + join(o.verdict.levels_used, ", ") + " -> " +
                                (n.verdict.levels_used.empty() ? std::string("none") : join(n.verdict.levels_used, ", ")));
  if (o.evidence_signals != n.evidence_signals)
    d.verdict_changes.push_back("evidence signals: " + o.evidence_signals + " -> " + n.evidence_signals);
  if (probed_check_state(o.probed_check) != probed_check_state(n.probed_check) && o.probed_check != "not recorded" &&
      n.probed_check != "not recorded")
    d.verdict_changes.push_back("probed check: " + o.probed_check + " -> " + n.probed_check);
  if (d.old_status != d.new_status) d.verdict_changes.push_back("status: " + d.old_status + " -> " + d.new_status);

  auto fo = fingerprint_from_json(o.fingerprint.is_object() ? nlohmann::json::parse(o.fingerprint.dump()) : nlohmann::json::object(), "old");
  auto fn = fingerprint_from_json(n.fingerprint.is_object() ? nlohmann::json::parse(n.fingerprint.dump()) : nlohmann::json::object(), "new");
  if (fo && fn) d.fingerprint_changes = fingerprint_changes(*fo, *fn);
  if (o.fingerprint_id != n.fingerprint_id &&
      std::none_of(d.fingerprint_changes.begin(), d.fingerprint_changes.end(), [](const FieldChange& c) { return c.field == "id"; }))
    d.fingerprint_changes.insert(d.fingerprint_changes.begin(), FieldChange{"id", o.fingerprint_id, n.fingerprint_id});

  std::map<std::string, const FigureResult*> new_by_name;
  for (const auto& f : n.figures) new_by_name[f.name] = &f;
  std::set<std::string> seen;
  for (const auto& f : o.figures) {
    seen.insert(f.name);
    FigureDiff fd;
    fd.name = f.name;
    fd.old_median = f.summary.median;
    fd.old_n = f.samples.size();
    const FigurePolicy* policy = find_policy(f.name, policies);
    fd.gate = policy ? policy->gate : f.gate;
    auto it = new_by_name.find(f.name);
    if (it == new_by_name.end()) {
      fd.status = "removed";
    } else {
      fd.new_median = it->second->summary.median;
      fd.new_n = it->second->samples.size();
      fd.change = fd.new_median - fd.old_median;
      fd.change_rel = fd.old_median != 0 ? fd.change / std::fabs(fd.old_median) : kNoValue;
      fd.status = judge_figure(f, *it->second, policy);
    }
    d.figures.push_back(fd);
  }
  for (const auto& f : n.figures) {
    if (seen.count(f.name)) continue;
    FigureDiff fd;
    fd.name = f.name;
    fd.new_median = f.summary.median;
    fd.new_n = f.samples.size();
    fd.gate = f.gate;
    fd.status = "new";
    d.figures.push_back(fd);
  }

  if (!o.kernel_families.empty() && !n.kernel_families.empty()) {
    const KernelFamilyComparison kc = compare_kernel_families(golden_kernel_families(o.kernel_families), n.kernel_families);
    d.kernel_lines = kc.lines();
    d.kernel_changes = kc.failures();
  } else if (!o.kernel_families.empty()) {
    d.kernel_changes.push_back("attention kernel set: " + kernel_families_text(golden_kernel_families(o.kernel_families)) +
                               " -> not recorded (no kernel tally in the new run)");
  } else if (!n.kernel_families.empty()) {
    d.kernel_lines.push_back("attention kernel set: not recorded -> " + kernel_families_text(golden_kernel_families(n.kernel_families)));
  }

  std::map<std::string, const AnswerResult*> new_answers;
  for (const auto& a : n.answers) new_answers[a.prompt_id] = &a;
  std::set<std::string> old_ids;
  for (const auto& a : o.answers) {
    old_ids.insert(a.prompt_id);
    auto it = new_answers.find(a.prompt_id);
    if (it == new_answers.end()) {
      d.answers.push_back({a.prompt_id, "removed", ""});
      continue;
    }
    AnswerComparison c = compare_answer(a.prompt_id, a.text, it->second->text);
    if (!c.identical) d.answers.push_back({a.prompt_id, "changed", c.diff});
  }
  for (const auto& a : n.answers)
    if (!old_ids.count(a.prompt_id)) d.answers.push_back({a.prompt_id, "added", ""});
  return d;
}

std::string format_result_diffs(const std::vector<ResultDiff>& diffs) {
  std::vector<const ResultDiff*> order;
  for (const auto& d : diffs) order.push_back(&d);
  std::stable_sort(order.begin(), order.end(),
                   [](const ResultDiff* a, const ResultDiff* b) { return a->verdict_changed() && !b->verdict_changed(); });
  std::string out;
  size_t verdicts = 0, regressions = 0, answers = 0, kernels = 0;
  for (const auto* d : order) {
    verdicts += d->verdict_changed();
    kernels += d->kernels_changed();
    regressions += d->regressed();
    answers += d->answers_changed();
  }
  out += "verdict and status changes: ";
  if (verdicts == 0) out += "none\n";
  else {
    out += std::to_string(verdicts) + " case(s)\n";
    for (const auto* d : order)
      for (const auto& v : d->verdict_changes) out += "  " + d->case_name + ": " + v + "\n";
  }
  out += "gated regressions: " + std::to_string(regressions) + " case(s); changed answers: " + std::to_string(answers) +
         " case(s); attention kernel set changed: " + std::to_string(kernels) + " case(s)\n";
  for (const auto* d : order)
    for (const auto& k : d->kernel_changes) out += "  " + d->case_name + ": " + k + "\n";
  for (const auto* d : order) {
    out += "\n== " + d->case_name + " (" + d->old_status + " -> " + d->new_status + ")\n";
    out += "old: " + d->old_path + "\nnew: " + d->new_path + "\n";
    for (const auto& v : d->verdict_changes) out += "CHANGED " + v + "\n";
    out += "fingerprint:\n" + describe_changes(d->fingerprint_changes);
    for (const auto& k : d->kernel_changes) out += "CHANGED " + k + "\n";
    if (!d->kernel_lines.empty()) out += "attention kernels (old -> new):\n";
    for (const auto& k : d->kernel_lines) out += "  " + k + "\n";
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-30s %12s %12s %12s %10s  %s\n", "figure", "old p50", "new p50", "change", "change%",
                  "status");
    out += buf;
    for (const auto& f : d->figures) {
      std::string rel = std::isfinite(f.change_rel) ? signed_num(100.0 * f.change_rel, "%") : "-";
      std::string n = " (n " + (f.old_n ? std::to_string(f.old_n) : std::string("-")) + "/" +
                      (f.new_n ? std::to_string(f.new_n) : std::string("-")) + ")";
      std::snprintf(buf, sizeof buf, "%-30s %12s %12s %12s %10s  %s%s%s\n", f.name.c_str(), fixed(f.old_median, 3).c_str(),
                    fixed(f.new_median, 3).c_str(), signed_num(f.change).c_str(), rel.c_str(), f.status.c_str(),
                    f.gate ? " [gate]" : "", n.c_str());
      out += buf;
    }
    if (d->answers.empty()) out += "answers: identical\n";
    for (const auto& a : d->answers) {
      out += "answer " + a.prompt_id + ": " + a.kind + "\n";
      if (!a.diff.empty()) out += a.diff;
    }
  }
  return out;
}

}  // namespace fp
