// The comparison step: a run's figures against this machine's golden (per launch: the rule is
// golden/threshold_policy.h), its answers against the stored reference answers and its verdict
// against the recorded one; and the recording of a golden (by `run --record-missing` into a fresh
// folder, from several launches, or by `accept` after review).
//
// Layout: <golden_root>/<fingerprint id>/fingerprint.json               the machine part
//                                       /<case>.json                    medians of launches (golden/golden_file.h)
//                                       /<case>/answers/<id>.txt        reference answers
//                                       /<case>/fingerprint.json        full fingerprint the golden came from
//                                       /<case>/verdict.json            the verdict it was recorded with
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "golden/compare.h"
#include "golden/fingerprint.h"
#include "golden/golden_file.h"
#include "report/run_result.h"

namespace fp {

struct GoldenPaths {
  std::string dir, golden_file, answers_dir;
  std::string machine_fingerprint_file, case_fingerprint_file, verdict_file;
};
GoldenPaths golden_paths(const std::string& golden_root, const std::string& fingerprint_id, const std::string& case_name);

// Direction and gate per figure as the job set them (flow/figures.h), and the case's minimum effect
// (FigureResult::min_effect; kDefaultMinEffect for a result file that predates it).
std::map<std::string, FigurePolicy> figure_policies(const std::vector<FigureResult>& figures);

// Each figure's launch medians and minimum effect, as the comparison and the recording take them.
std::vector<Measured> measured_figures(const std::vector<FigureResult>& figures);

struct GoldenStepOptions {
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
// the run's, every changed field is reported.
void compare_goldens(const GoldenStepOptions& options, RunResult& r);

// The devices of a verdict backend text "CPU 30, CUDA0 126" -> {CPU, CUDA0}.
std::set<std::string> verdict_devices(const std::string& backend);

// The verdict a golden was recorded with (<case>/verdict.json).
struct RecordedVerdict {
  std::string state;    // active | not active | no evidence
  std::string backend;  // e.g. "CPU 30", "CUDA0 156"
  std::vector<std::string> levels_used;  // the evidence levels that answered ("log", "placement", "kernels")
  bool levels_known = false;             // the file lists them (verdict files of older versions may not)
};
Result<RecordedVerdict> load_recorded_verdict(const std::string& path);

// Evidence lost against the golden: the levels the recorded verdict used that this run lacks (evidence/
// verdict.h evidence_lost), each line ending with how to keep the new state ("unless accepted").
std::vector<std::string> evidence_lost_since_golden(const RecordedVerdict& before, const RunResult& r,
                                                    const std::string& verdict_file);

// The run's attention kernel set against the golden's (golden/kernel_families.h): comparison lines
// into r.golden_lines, a swap or a share moved beyond noise into r.failures.
void compare_kernel_set(const Golden& golden, const std::string& golden_file, RunResult& r);


// The case's recorded fingerprint: <case>/fingerprint.json, else the folder's machine part;
// nullopt when neither exists; an error when one exists but cannot be read.
Result<std::optional<Fingerprint>> load_golden_fingerprint(const GoldenPaths& paths);

// What a golden write will put on disk, computed before anything is written so that `accept`
// can show exactly this and write exactly this.
struct GoldenPlan {
  std::optional<Golden> golden;                      // thresholds; nullopt: leave the file alone
  std::optional<std::map<std::string, std::string>> answers;  // prompt id -> answer; nullopt: leave them
  std::string case_fingerprint_json;                 // written with the verdict
  std::string machine_fingerprint_json;              // written only when the folder has none
  std::string verdict_json;                          // "": leave it
};
// The verdict is planned with the figures (accept) or, with `verdict`, on its own.
Result<GoldenPlan> plan_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous, bool figures,
                               bool answers, bool verdict = false);
// Writes the plan, every file atomically (answers first, thresholds last: a golden never points
// at answers that are not there yet).
Status write_golden_plan(const GoldenPaths& paths, const GoldenPlan& plan);

// plan_golden + write_golden_plan for figures and answers.
Status record_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous);

}  // namespace fp
