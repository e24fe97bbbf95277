#include "report/report_data.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>

#include "golden/golden_file.h"
#include "golden/threshold_policy.h"
#include "history/history.h"
#include "measure/stats.h"
#include "report/lenient_json.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using html::dbl;
using html::read_json;
using html::str;

void load_golden_marks(ReportCase& rc) {
  const std::string dir = str(rc.result, {"golden", "dir"});
  const std::string name = str(rc.result, {"case"});
  if (dir.empty()) {
    rc.golden_note = "no golden was compared (golden status: " + str(rc.result, {"golden", "status"}, "none") + ")";
    return;
  }
  const std::string path = dir + "/" + name + ".json";
  auto g = load_golden(path);
  if (!g) {
    rc.golden_note = "golden thresholds not shown: " + g.error().message;
    return;
  }
  // The limit is the threshold policy's for this run's launches and the case's minimum effect, as
  // the run recorded them (a result file without them, or a golden too small to know its noise,
  // gets no mark for that figure).
  const json figs = rc.result.value("figures", json::object());
  const double launches = dbl(rc.result, "launches", 1);
  for (const auto& [fname, gf] : g->figures) {
    const json fig = figs.value(fname, json::object());
    const FigurePolicy policy{gf.direction, gf.gate, MinEffect{dbl(fig, "min_effect"), std::max(0.0, dbl(fig, "min_effect_floor", 0))}};
    GoldenMark m;
    m.median = gf.median;
    m.lower_is_better = gf.direction == Direction::lower_is_better;
    m.limit = regression_limit(policy, LaunchSpread{gf.median, gf.spread, gf.n}, static_cast<size_t>(std::max(1.0, launches)));
    m.gate = gf.gate;
    if (std::isfinite(m.limit)) rc.golden[fname] = m;
  }
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::vector<TrendStep> trend_steps(const std::vector<TrendPoint>& points, const std::string& figure, size_t window) {
  std::vector<TrendStep> out;
  auto key = [](const TrendPoint& p) { return p.runtime_build.empty() ? p.fingerprint : p.runtime_build; };
  for (size_t i = 1; i < points.size(); ++i) {
    if (key(points[i]) == key(points[i - 1])) continue;
    std::vector<double> before, after;
    for (size_t j = i; j-- > 0 && before.size() < window && key(points[j]) == key(points[i - 1]);)
      if (auto it = points[j].p50.find(figure); it != points[j].p50.end()) before.push_back(it->second);
    for (size_t j = i; j < points.size() && after.size() < window && key(points[j]) == key(points[i]); ++j)
      if (auto it = points[j].p50.find(figure); it != points[j].p50.end()) after.push_back(it->second);
    if (before.empty() || after.empty()) continue;
    TrendStep st;
    st.index = i;
    st.from_build = key(points[i - 1]);
    st.to_build = key(points[i]);
    st.before = median(before);
    st.after = median(after);
    st.change_rel = st.before != 0 ? (st.after - st.before) / std::fabs(st.before) : 0;
    out.push_back(st);
  }
  return out;
}

Result<ReportData> load_report_data(const std::string& path, const std::string& results_root) {
  ReportData d;
  d.source = path;
  d.generated_utc = utc_now();
  std::error_code ec;
  if (!fs::exists(path, ec)) return make_error(path + ": no such file or folder (expected a run folder, a case folder, a fingerprint folder or a results folder)");

  auto results = resolve_results(path);
  if (!results && fs::is_regular_file(fs::path(path) / "history.tsv", ec)) {
    // A results root: the latest run of every case in its history, across fingerprints.
    if (auto latest = latest_results_in_history(path); !latest.empty()) results = latest;
  }
  if (results) {
    for (const auto& rp : *results) {
      auto j = read_json(rp);
      if (!j) {
        d.notes.push_back(j.error().message);
        continue;
      }
      ReportCase rc;
      rc.result = *j;
      rc.result_path = rp;
      load_golden_marks(rc);
      d.cases.push_back(std::move(rc));
    }
  }
  auto load_all = [&](const std::string& file, const std::string& prefix, std::vector<json>& into, std::vector<std::string>& paths) {
    for (const auto& p : latest_run_files(path, file, prefix)) {
      auto j = read_json(p);
      if (!j) {
        d.notes.push_back(j.error().message);
        continue;
      }
      into.push_back(*j);
      paths.push_back(p);
    }
  };
  load_all("ab.json", "ab-", d.ab_runs, d.ab_paths);
  load_all("matrix.json", "matrix-", d.matrix_runs, d.matrix_paths);
  if (d.cases.empty() && d.ab_runs.empty() && d.matrix_runs.empty())
    return make_error(path + ": holds no result.json, no ab.json and no matrix.json" + (results ? "" : " (" + results.error().message + ")"));

  const fs::path root = results_root.empty() ? fs::path(find_results_root(path)) : fs::path(results_root);
  if (!root.empty()) {
    d.results_root = root.string();
    auto history = load_history(d.results_root);
    if (!history) {
      d.notes.push_back("trends not shown: " + history.error().message);
    } else {
      for (const auto& rc : d.cases) {
        const std::string name = str(rc.result, {"case"});
        auto runs = runs_of_case(*history, name);
        if (runs.size() > 60) runs.erase(runs.begin(), runs.end() - 60);
        std::vector<TrendPoint> pts;
        size_t unreadable = 0;
        for (const auto& e : runs) {
          auto j = read_json(run_dir_path(d.results_root, e) + "/result.json");
          if (!j) {
            ++unreadable;
            continue;
          }
          TrendPoint p;
          p.finished_utc = e.finished_utc;
          p.fingerprint = e.fingerprint;
          p.status = e.status;
          p.runtime_build = str(*j, {"runtime", "build"});
          if (j->contains("figures") && (*j)["figures"].is_object())
            for (const auto& [fname, fig] : (*j)["figures"].items())
              if (double v = dbl(fig, "p50"); std::isfinite(v)) p.p50[fname] = v;
          pts.push_back(std::move(p));
        }
        if (unreadable) d.notes.push_back(name + ": " + std::to_string(unreadable) + " run(s) in " + history_path(d.results_root) +
                                          " have no readable result.json (removed or corrupt); left out of the trend");
        d.trends[name] = std::move(pts);
      }
    }
  }
  return d;
}

}  // namespace fp
