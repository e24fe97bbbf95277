// The comparison step: a run's figures against this machine's golden thresholds and its answers
// against the stored reference answers; and the recording of a golden (by `run --record-missing`
// into a fresh folder, or by `accept` after review).
//
// Layout: <golden_root>/<fingerprint id>/fingerprint.json
//                                       /<case>.json              thresholds (golden/golden_file.h)
//                                       /<case>/answers/<id>.txt  reference answers
#pragma once

#include <map>
#include <string>
#include <vector>

#include "golden/compare.h"
#include "golden/golden_file.h"
#include "report/run_result.h"

namespace fp {

struct GoldenPaths {
  std::string dir, golden_file, answers_dir;
};
GoldenPaths golden_paths(const std::string& golden_root, const std::string& fingerprint_id, const std::string& case_name);

// Direction, gate and least tolerance per figure; the tolerance is widened to 6 MADs of the
// figure's own spread on this machine, so a golden never asks for less noise than it showed.
std::map<std::string, FigurePolicy> figure_policies(const std::vector<FigureResult>& figures);

std::vector<Measured> measured_figures(const std::vector<FigureResult>& figures);

// Fills r.golden_* and the answers' reference state; adds failures. With record_missing and no
// golden yet, records this run (only a passing one).
void compare_goldens(const std::string& golden_root, bool record_missing, RunResult& r);

// Writes the golden thresholds, the reference answers and fingerprint.json for a run.
Status record_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous);

}  // namespace fp
