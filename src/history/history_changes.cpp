#include "history/history_changes.h"

#include <algorithm>
#include <cmath>

#include "util/text.h"

namespace fp {
namespace {

// The run as the change-point search needs it, or an Error saying why it is left out.
Result<NightRun> read_night(const std::string& results_root, const HistoryEntry& entry) {
  NightRun run;
  run.entry = entry;
  run.result_path = run_dir_path(results_root, entry) + "/result.json";
  FP_TRY(std::string text, read_file(run.result_path));
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(run.result_path + ": not a valid result file (truncated or corrupt JSON): " + e.what());
  }
  if (!j.is_object()) return make_error(run.result_path + ": not a valid result file: expected a JSON object");
  if (j.contains("fingerprint") && j["fingerprint"].is_string()) run.fingerprint_id = j["fingerprint"].get<std::string>();
  if (j.contains("fingerprint_detail") && j["fingerprint_detail"].is_object()) run.fingerprint = j["fingerprint_detail"];
  if (j.contains("launches") && j["launches"].is_number_integer()) run.launches = j["launches"].get<int>();
  if (!j.contains("figures") || !j["figures"].is_object())
    return make_error(run.result_path + ": field \"figures\": missing or not an object (a run that timed nothing)");
  for (const auto& [name, f] : j["figures"].items()) {
    if (!f.is_object() || !f.contains("p50") || !f["p50"].is_number()) continue;  // null: no samples that night
    NightFigure figure;
    figure.name = name;
    figure.median = f["p50"].get<double>();
    // The night's value as the golden comparison takes it: the median of the launch medians.
    if (f.contains("launch_medians") && f["launch_medians"].is_array() && !f["launch_medians"].empty()) {
      std::vector<double> lm;
      for (const auto& v : f["launch_medians"])
        if (v.is_number()) lm.push_back(v.get<double>());
      if (lm.size() == f["launch_medians"].size()) figure.median = median_of(lm);
    }
    if (!std::isfinite(figure.median)) continue;
    if (f.contains("gate") && f["gate"].is_boolean()) figure.gate = f["gate"].get<bool>();
    figure.lower_is_better = !(f.contains("direction") && f["direction"] == "higher_is_better");
    run.figures.push_back(figure);
  }
  if (run.figures.empty()) return make_error(run.result_path + ": field \"figures\": no figure has a median (field \"p50\")");
  return run;
}

}  // namespace

CaseNights load_case_nights(const std::string& results_root, const std::vector<HistoryEntry>& history,
                            const std::string& case_name) {
  CaseNights out;
  out.case_name = case_name;
  for (const auto& entry : runs_of_case(history, case_name)) {
    auto run = read_night(results_root, entry);
    if (!run) {
      out.skipped.push_back(run.error().message);
      continue;
    }
    out.runs.push_back(std::move(*run));
  }
  for (size_t r = 0; r < out.runs.size(); ++r)
    for (const auto& figure : out.runs[r].figures) {
      auto it = std::find_if(out.figures.begin(), out.figures.end(), [&](const FigureSeries& s) { return s.name == figure.name; });
      if (it == out.figures.end()) it = out.figures.insert(out.figures.end(), FigureSeries{figure.name, false, true, {}, {}});
      it->gate = figure.gate;  // the latest run's word
      it->lower_is_better = figure.lower_is_better;
      it->values.push_back(figure.median);
      it->runs.push_back(r);
    }
  std::stable_partition(out.figures.begin(), out.figures.end(), [](const FigureSeries& s) { return s.gate; });
  return out;
}

std::vector<FigureChange> find_figure_changes(const CaseNights& nights, const ChangePointOptions& options) {
  std::vector<FigureChange> out;
  for (const auto& series : nights.figures)
    for (const auto& point : find_change_points(series.values, options)) {
      FigureChange c;
      c.figure = series.name;
      c.gate = series.gate;
      c.lower_is_better = series.lower_is_better;
      c.point = point;
      c.run_before = series.runs[point.index - 1];
      c.run_at = series.runs[point.index];
      out.push_back(c);
    }
  return out;
}

}  // namespace fp
