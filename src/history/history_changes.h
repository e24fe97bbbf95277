// Change points over the nights of a case (`flashproof history --changes`): the case's runs from
// history.tsv, oldest first and across fingerprints, each run's result.json read for the median
// (p50) of every figure and for its fingerprint; one series per figure; change points of each series
// (history/change_points.h), with the runs either side of the step so the caller can say what
// changed in the fingerprint that night.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "history/change_points.h"
#include "history/history.h"

namespace fp {

// One figure of one run.
struct NightFigure {
  std::string name;
  double median = 0;          // the night's value: the median of its launch medians (figures.<name>.launch_medians),
                              // else (older result files) figures.<name>.p50
  bool gate = false;
  bool lower_is_better = true;
};

// One readable run of a case.
struct NightRun {
  HistoryEntry entry;
  std::string result_path;            // <run folder>/result.json
  std::string fingerprint_id;         // result.json "fingerprint"
  nlohmann::ordered_json fingerprint; // result.json "fingerprint_detail" (null when absent)
  int launches = 1;                   // result.json "launches"
  std::vector<NightFigure> figures;   // the figures with a median, in the file's order
};

// A figure as the runs describe it.
struct FigureSeries {
  std::string name;
  bool gate = false;              // the latest run that has the figure gates on it
  bool lower_is_better = true;
  std::vector<double> values;     // the figure's median per run that has it, oldest first
  std::vector<size_t> runs;       // index into CaseNights::runs of each value
};

struct CaseNights {
  std::string case_name;
  std::vector<NightRun> runs;        // readable runs, oldest first
  std::vector<std::string> skipped;  // "<result.json>: why" for each run left out
  std::vector<FigureSeries> figures; // gated figures first, then in the order the files name them
};

// The runs of `case_name` in `history` read from `results_root`. A run whose result.json is
// missing, unreadable or lacks figures is skipped with a note in `skipped`, never an error.
CaseNights load_case_nights(const std::string& results_root, const std::vector<HistoryEntry>& history,
                            const std::string& case_name);

// One change point of one figure, with the runs either side of the step.
struct FigureChange {
  std::string figure;
  bool gate = false;
  bool lower_is_better = true;
  ChangePoint point;    // point.index indexes the figure's series
  size_t run_before = 0, run_at = 0;  // index into CaseNights::runs: the last run before the step, the first after
};

// Change points of every figure: gated figures first, each figure's in time order.
std::vector<FigureChange> find_figure_changes(const CaseNights& nights, const ChangePointOptions& options = {});

}  // namespace fp
