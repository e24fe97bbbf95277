// Compares two results of one case (`flashproof diff OLD NEW`, the nightly diff, the upgrade gate):
// what changed in the verdict and status first, then the fingerprint field by field, the attention
// kernel set by family (a swap named), the figures side by side with their change, and the answers
// as unified diffs.
//
// A figure's change is judged with the golden rule (golden/threshold_policy.h): the OLD run's launch
// medians stand in for the golden's (median, MAD, n launches), the caller's policies give direction,
// gate and minimum effect, so "regressed" means the same here as in a run against a golden (two
// one-launch runs resolve nothing beyond the minimum effect: within_noise).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "golden/fingerprint.h"
#include "golden/threshold_policy.h"
#include "result/run_result.h"

namespace fp {

struct FigureDiff {
  std::string name;
  double old_median = kNoValue, new_median = kNoValue;  // NaN on the side that lacks the figure
  size_t old_n = 0, new_n = 0;
  double change = kNoValue, change_rel = kNoValue;       // new - old, and / |old|
  std::string status;  // pass | regressed | improved | within_noise | new | removed | not judged
  bool gate = false;
};

struct AnswerDiff {
  std::string prompt_id;
  std::string kind;  // changed | added | removed
  std::string diff;  // unified diff for changed
};

struct ResultDiff {
  std::string case_name, old_path, new_path;
  std::string old_status, new_status;
  std::vector<std::string> verdict_changes;  // "verdict: active -> not active", "status: pass -> fail", ...
  std::vector<FieldChange> fingerprint_changes;
  std::vector<FigureDiff> figures;           // old figures by name, then figures only the new run has
  std::vector<AnswerDiff> answers;
  // The attention kernel set, old against new (golden/kernel_families.h, the old run standing in for
  // the golden): every family's line, and what changed ("KERNEL SWAP: ...").
  std::vector<std::string> kernel_lines, kernel_changes;
  bool verdict_changed() const { return !verdict_changes.empty(); }
  bool kernels_changed() const { return !kernel_changes.empty(); }
  bool answers_changed() const { return !answers.empty(); }
  bool regressed() const;                    // a gated figure regressed or went missing
};

// Policies keyed like golden_from_measured's (find_policy: exact name or name prefix + "_"); a figure
// no policy matches is shown with its change but "not judged".
ResultDiff diff_results(const RunResult& old_run, const RunResult& new_run,
                        const std::map<std::string, FigurePolicy>& policies);

// The report for several cases: a summary with verdict and status changes first, then per case
// (cases with verdict changes first) the fingerprint changes, the figure table and answer diffs.
std::string format_result_diffs(const std::vector<ResultDiff>& diffs);

}  // namespace fp
