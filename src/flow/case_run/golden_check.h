// Checking a run against this machine's golden: its figures (per launch: the rule is
// golden/threshold_policy.h), its answers against the stored reference answers, its verdict against
// the recorded one and its attention kernel set against the golden's; what is missing is recorded
// (flow/case_run/golden_record.h) when the options say so. The layout is golden/golden_paths.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "golden/golden_file.h"
#include "result/run_result.h"

namespace fp {

struct GoldenCheckOptions {
  std::string golden_root;    // reference answers, the recorded verdict and (unless timing_root) thresholds
  std::string timing_root;    // thresholds from here instead: reviewed goldens; none for the fingerprint
                              // is reported "not compared", not a failure; never recorded into
  std::string golden_id;      // the fingerprint folder to compare with (the upgrade gate's baseline);
                              // empty: the run's own, and the recorded verdict is checked too
  std::string results_root;   // the history the nights' noise is learned from (golden/noise_band.h); empty: none
  bool record_missing = false;          // record missing thresholds (>= kMinGoldenLaunches launches), answers, verdict
  bool record_missing_answers = false;  // record missing answers and the verdict only; figures not compared
};

// The earlier nights of r's case on r's fingerprint with as many launches as r that passed (a
// failed night, a real step among them, never becomes noise), oldest first, from the history under `results_root` (history/history.h): per figure the
// night's value (the median of its launch medians). r's own run folder is left out.
std::map<std::string, std::vector<double>> earlier_nights(const std::string& results_root, const RunResult& r);

// Fills r.golden_* and the answers' reference state; adds failures. What is missing is recorded
// as the options say, from a passing run only. When the golden's recorded fingerprint differs from
// the run's, every changed field is reported. A golden that cannot be written makes r incomplete
// (r.complete = false) with the path and the error.
void compare_goldens(const GoldenCheckOptions& options, RunResult& r);

// The verdict a golden was recorded with (<case>/verdict.json).
struct RecordedVerdict {
  std::string state;    // active | not active | no evidence
  std::string backend;  // e.g. "CPU 30", "CUDA0 156"
  std::map<std::string, int> fused_backends;  // `backend` read back (evidence/verdict_types.h backends_from_text)
  std::vector<std::string> levels_used;  // the evidence levels that answered ("log", "placement", "kernels")
  bool levels_known = false;             // the file lists them (verdict files of older versions may not)
  std::optional<bool> degraded;          // "active, degraded" when recorded; none in older verdict files
};
// Whether the run's verdict differs from the recorded one: state, devices, or degradation (when
// the file records it).
bool verdict_differs(const RecordedVerdict& before, const RunVerdict& now);
// "active, degraded (CUDA0 68)" as recorded.
std::string recorded_verdict_text(const RecordedVerdict& v);
Result<RecordedVerdict> load_recorded_verdict(const std::string& path);

// Evidence lost against the golden: the levels the recorded verdict used that this run lacks (evidence/
// verdict.h evidence_lost), each line ending with how to keep the new state ("unless accepted").
std::vector<std::string> evidence_lost_since_golden(const RecordedVerdict& before, const RunResult& r,
                                                    const std::string& verdict_file);

// The run's attention kernel set against the golden's (golden/kernel_families.h): comparison lines
// into r.golden_lines, a swap or a share moved beyond noise into r.failures.
void compare_kernel_set(const Golden& golden, const std::string& golden_file, RunResult& r);

// A verdict as a golden records it: its state, then its backend in parentheses where there is one
// ("fused (CUDA0)").
std::string recorded_verdict_text(const std::string& state, const std::string& backend);

}  // namespace fp
