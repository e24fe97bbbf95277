// Compares a run's measured figures against this machine's golden thresholds, and builds a new
// golden from measured samples (for `accept`).
//
// The rule, per figure, with d = measured median - golden median signed so that d > 0 is worse
// (direction lower_is_better: d = m - g; higher_is_better: d = g - m):
//   tolerance = max(tolerance_rel * |golden median|, tolerance_abs)
//   noise     = k * sqrt(se_golden^2 + se_measured^2), where se = 1.2533 * 1.4826 * MAD / sqrt(n) is the
//               large-sample standard error of a median (sqrt(pi/2) * sigma / sqrt(n)), sigma estimated
//               from the MAD; golden MAD and n come from the file, measured ones from the samples;
//               k = 3 by default.
//   regressed    when d > tolerance and d > noise         (fails the job if the figure gates)
//   improved     when -d > tolerance and -d > noise
//   within_noise when |d| > tolerance but |d| <= noise     (reported, never a failure: add repetitions)
//   pass         otherwise
//   new          measured, no golden figure (reported, not a failure; `accept` adds it)
//   missing      golden figure not measured, or measured with no samples or non-finite samples
//                (fails the job if the figure gates: no evidence is never a pass)
#pragma once

#include <map>
#include <string>
#include <vector>

#include "golden/golden_file.h"
#include "measure/stats.h"
#include "util/result.h"

namespace fp {

// One figure as measured by this run: every repetition's value, in the figure's unit.
struct Measured {
  std::string name;
  std::vector<double> samples;
};

enum class FigureStatus { pass, regressed, improved, within_noise, new_figure, missing };
const char* to_string(FigureStatus s);

struct CompareOptions {
  double noise_k = 3.0;  // standard errors of the difference of medians counted as noise
};

struct FigureComparison {
  std::string name;
  FigureStatus status = FigureStatus::pass;
  bool gate = false;     // from the golden; false for a new figure
  bool failed = false;   // gate && (regressed || missing)
  double golden_median = kNoValue;    // NaN for a new figure
  double measured_median = kNoValue;  // NaN for a missing figure
  double tolerance = kNoValue;  // max(tolerance_rel * |golden median|, tolerance_abs); NaN when not compared
  double noise = kNoValue;      // noise band as above; NaN when not compared
  double worse_by = kNoValue;   // d above (negative: better); NaN when not compared
  double worse_by_rel = kNoValue;  // d / |golden median|; NaN when the golden median is 0 or not compared
  std::string message;     // one line: figure, medians, tolerance, "worse by X (Y%)"
};

struct Comparison {
  std::vector<FigureComparison> figures;  // golden figures by name, then new ones by name
  bool failed() const;                    // any figure failed
};

// Errors only on malformed input: a figure measured twice, or an empty figure name.
Result<Comparison> compare_to_golden(const Golden& golden, const std::vector<Measured>& measured,
                                     const CompareOptions& options = {});

// Direction, tolerances and gate for one kind of figure, passed in by the caller (the job decides
// which figures gate).
struct FigurePolicy {
  Direction direction = Direction::lower_is_better;
  double tolerance_rel = 0.25;
  double tolerance_abs = 0.0;
  bool gate = false;
};

// Builds the golden that `accept` writes: median, MAD and n from each figure's samples. Thresholds
// come from `previous` when it has the figure (an operator's hand-tuned tolerance survives an
// accept), else from `policies`: a key matches a figure named exactly like it or starting with
// key + "_" ("ttft_ms" matches "ttft_ms_p95"); the longest match wins. A figure no policy matches,
// one with no samples or with non-finite samples is an error naming it: never a silent default.
Result<Golden> golden_from_measured(const std::string& fingerprint, const std::vector<Measured>& measured,
                                    const std::map<std::string, FigurePolicy>& policies,
                                    const Golden* previous = nullptr);

}  // namespace fp
