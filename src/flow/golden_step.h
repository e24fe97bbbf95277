// The comparison step: a run's figures against this machine's golden thresholds and its answers
// against the stored reference answers; and the recording of a golden (by `run --record-missing`
// into a fresh folder, or by `accept` after review).
//
// Layout: <golden_root>/<fingerprint id>/fingerprint.json               the machine part
//                                       /<case>.json                    thresholds (golden/golden_file.h)
//                                       /<case>/answers/<id>.txt        reference answers
//                                       /<case>/fingerprint.json        full fingerprint the golden came from
//                                       /<case>/verdict.json            the verdict it was recorded with
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "golden/compare.h"
#include "golden/fingerprint.h"
#include "golden/golden_file.h"
#include "report/run_result.h"

namespace fp {

// The least relative tolerance of a recorded golden figure, unless the recording asks for more.
inline constexpr double kDefaultMinToleranceRel = 0.5;

struct GoldenPaths {
  std::string dir, golden_file, answers_dir;
  std::string machine_fingerprint_file, case_fingerprint_file, verdict_file;
};
GoldenPaths golden_paths(const std::string& golden_root, const std::string& fingerprint_id, const std::string& case_name);

// Direction, gate and least tolerance per figure; the tolerance is widened to 6 MADs of the
// figure's own spread on this machine, so a golden never asks for less noise than it showed.
// `min_tolerance_rel` is the least relative tolerance a recorded figure gets (0.5: half as slow again).
std::map<std::string, FigurePolicy> figure_policies(const std::vector<FigureResult>& figures,
                                                    double min_tolerance_rel = kDefaultMinToleranceRel);

std::vector<Measured> measured_figures(const std::vector<FigureResult>& figures);

// Fills r.golden_* and the answers' reference state; adds failures. With record_missing and no
// golden yet, records this run (only a passing one). `golden_id` names the fingerprint folder to
// compare against (the upgrade gate's baseline); empty: the run's own fingerprint id. When the
// golden's recorded fingerprint differs from the run's, every changed field is reported.
void compare_goldens(const std::string& golden_root, bool record_missing, RunResult& r,
                     const std::string& golden_id = "", double min_tolerance_rel = kDefaultMinToleranceRel);

// The verdict a golden was recorded with (<case>/verdict.json).
struct RecordedVerdict {
  std::string state;    // active | not active | no evidence
  std::string backend;  // e.g. "CPU 30", "CUDA0 156"
};
Result<RecordedVerdict> load_recorded_verdict(const std::string& path);

// The case's recorded fingerprint: <case>/fingerprint.json, else the folder's machine part;
// nullopt when neither exists; an error when one exists but cannot be read.
Result<std::optional<Fingerprint>> load_golden_fingerprint(const GoldenPaths& paths);

// What a golden write will put on disk, computed before anything is written so that `accept`
// can show exactly this and write exactly this.
struct GoldenPlan {
  std::optional<Golden> golden;                      // thresholds; nullopt: leave the file alone
  std::optional<std::map<std::string, std::string>> answers;  // prompt id -> answer; nullopt: leave them
  std::string case_fingerprint_json;                 // written with the thresholds
  std::string machine_fingerprint_json;              // written only when the folder has none
  std::string verdict_json;                          // written with the thresholds
};
Result<GoldenPlan> plan_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous, bool figures,
                               bool answers, double min_tolerance_rel = kDefaultMinToleranceRel);
// Writes the plan, every file atomically (answers first, thresholds last: a golden never points
// at answers that are not there yet).
Status write_golden_plan(const GoldenPaths& paths, const GoldenPlan& plan);

// plan_golden + write_golden_plan for figures and answers.
Status record_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous,
                     double min_tolerance_rel = kDefaultMinToleranceRel);

}  // namespace fp
