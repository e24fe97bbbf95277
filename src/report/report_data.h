// What `flashproof report` shows, read from disk: result.json files (history/history.h
// resolve_results), the latest ab.json and matrix.json per case, the goldens each result names, and
// each case's history (results/history.tsv). Reads JSON leniently (report/lenient_json.h), so a
// report of an old tree still renders; what could not be read is listed, never dropped.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

// One past run of a case, for its trend.
struct TrendPoint {
  std::string finished_utc;
  std::string fingerprint;
  std::string runtime_build;   // e.g. "b11669"; a change of build or fingerprint is marked
  std::string status;          // pass | fail | incomplete
  std::map<std::string, double> p50;  // figure -> median
};

// What one case's golden says about a figure (golden/golden_file.h).
struct GoldenMark {
  double median = 0;
  double limit = 0;            // the worst value still passing (golden/threshold_policy.h regression_limit)
  bool lower_is_better = true;
  bool gate = false;
};

// One case run in the report: its result and the golden it was compared with.
struct ReportCase {
  nlohmann::json result;                        // result.json
  std::string result_path;
  std::map<std::string, GoldenMark> golden;     // by figure name as the golden names it
  std::string golden_note;                      // why there is no golden, when there is none
};

// Everything one report shows.
struct ReportData {
  std::string source;          // what the user named
  std::string results_root;    // where history.tsv was found ("" when none)
  std::string generated_utc;
  std::vector<ReportCase> cases;
  std::vector<nlohmann::json> ab_runs;          // ab.json contents
  std::vector<std::string> ab_paths;
  std::vector<nlohmann::json> matrix_runs;      // matrix.json contents (report/matrix_report.h)
  std::vector<std::string> matrix_paths;
  std::map<std::string, std::vector<TrendPoint>> trends;  // case -> runs, oldest first
  std::vector<std::string> notes;               // files that could not be read, and why
};

// Gathers everything under `path`: result.json files (history/history.h resolve_results), the latest
// ab.json and matrix.json per case, goldens named by each result, and the history of each case. `results_root`:
// where history.tsv lives; "" = look in `path` and the folders above it. Error when `path` holds
// neither a result, an A/B run nor a matrix.
Result<ReportData> load_report_data(const std::string& path, const std::string& results_root = "");

// The trend's step at each change of runtime build: median of the figure over up to `window` runs
// before against up to `window` runs after, as a relative change ("+20.3%" = 20.3% higher).
struct TrendStep {
  size_t index = 0;            // first point of the new build
  std::string from_build, to_build;
  double before = 0, after = 0, change_rel = 0;
};
std::vector<TrendStep> trend_steps(const std::vector<TrendPoint>& points, const std::string& figure, size_t window = 5);

}  // namespace fp
