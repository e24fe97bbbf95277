// Recording a golden: what a golden write puts on disk (thresholds from launch medians, reference
// answers, the verdict and fingerprint it was recorded with), planned before anything is written,
// then written. Used by `run --record-missing` (flow/case_run/golden_check.h) and by `accept` after review.
// The layout is golden/golden_paths.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "golden/compare.h"
#include "golden/golden_file.h"
#include "golden/golden_paths.h"
#include "result/run_result.h"

namespace fp {

// Direction and gate per figure as the job set them (flow/passes/figures.h), and the case's minimum effect
// (FigureResult::min_effect; kDefaultMinEffect for a result file that predates it).
std::map<std::string, FigurePolicy> figure_policies(const std::vector<FigureResult>& figures);

// Each figure's launch medians and minimum effect, as the comparison and the recording take them.
std::vector<Measured> measured_figures(const std::vector<FigureResult>& figures);

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
