#include "flow/golden_step.h"

#include <cmath>
#include <filesystem>

#include "golden/answers.h"
#include "util/text.h"

namespace fp {
namespace {
namespace fs = std::filesystem;

std::string verdict_to_json(const RunResult& r) {
  nlohmann::ordered_json j;
  j["state"] = r.verdict;
  j["backend"] = r.verdict_backend;
  j["levels_used"] = r.levels_used;
  return j.dump(2) + "\n";
}

std::string fingerprint_text(const nlohmann::ordered_json& j) { return j.dump(2) + "\n"; }

}  // namespace

GoldenPaths golden_paths(const std::string& golden_root, const std::string& fingerprint_id, const std::string& case_name) {
  GoldenPaths p;
  p.dir = golden_root + "/" + fingerprint_id;
  p.golden_file = p.dir + "/" + case_name + ".json";
  p.answers_dir = p.dir + "/" + case_name + "/answers";
  p.machine_fingerprint_file = p.dir + "/fingerprint.json";
  p.case_fingerprint_file = p.dir + "/" + case_name + "/fingerprint.json";
  p.verdict_file = p.dir + "/" + case_name + "/verdict.json";
  return p;
}

std::map<std::string, FigurePolicy> figure_policies(const std::vector<FigureResult>& figures, double min_tolerance_rel) {
  std::map<std::string, FigurePolicy> p;
  for (const auto& f : figures) {
    FigurePolicy fp;
    fp.direction = f.lower_is_better ? Direction::lower_is_better : Direction::higher_is_better;
    fp.gate = f.gate;
    fp.tolerance_rel = min_tolerance_rel;
    fp.tolerance_abs = f.lower_is_better ? 2.0 : 0.0;  // ms: loopback and scheduler jitter
    if (f.summary.median > 0 && std::isfinite(f.summary.mad))
      fp.tolerance_rel = std::max(fp.tolerance_rel, 6.0 * f.summary.mad / f.summary.median);
    p[f.name] = fp;
  }
  return p;
}

std::vector<Measured> measured_figures(const std::vector<FigureResult>& figures) {
  std::vector<Measured> m;
  for (const auto& f : figures) m.push_back({f.name, f.samples});
  return m;
}

Result<RecordedVerdict> load_recorded_verdict(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  try {
    auto j = nlohmann::json::parse(text);
    return RecordedVerdict{j.at("state").get<std::string>(), j.at("backend").get<std::string>()};
  } catch (const nlohmann::json::exception& e) {
    return make_error(path + ": not a valid verdict file (truncated or corrupt?): " + e.what());
  }
}

Result<std::optional<Fingerprint>> load_golden_fingerprint(const GoldenPaths& paths) {
  for (const auto& file : {paths.case_fingerprint_file, paths.machine_fingerprint_file}) {
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;
    FP_TRY(Fingerprint f, load_fingerprint(file));
    return std::optional<Fingerprint>(f);
  }
  return std::optional<Fingerprint>();
}

Result<GoldenPlan> plan_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous, bool figures,
                               bool answers, double min_tolerance_rel) {
  GoldenPlan plan;
  if (figures) {
    FP_TRY(Golden g, golden_from_measured(r.fingerprint_id, measured_figures(r.figures), figure_policies(r.figures, min_tolerance_rel), previous));
    plan.golden = g;
    plan.verdict_json = verdict_to_json(r);
    if (r.fingerprint.is_object() && !r.fingerprint.empty()) plan.case_fingerprint_json = fingerprint_text(r.fingerprint);
  }
  if (answers) {
    std::map<std::string, std::string> a;
    for (const auto& ans : r.answers) a[ans.prompt_id] = ans.text;
    plan.answers = a;
  }
  std::error_code ec;
  if (!fs::exists(paths.machine_fingerprint_file, ec) && r.fingerprint.is_object() && !r.fingerprint.empty()) {
    auto f = fingerprint_from_json(nlohmann::json::parse(r.fingerprint.dump()), r.output_dir + "/result.json");
    if (f) plan.machine_fingerprint_json = fingerprint_text(f->machine_json());
  }
  return plan;
}

Status write_golden_plan(const GoldenPaths& paths, const GoldenPlan& plan) {
  std::error_code ec;
  fs::create_directories(paths.dir, ec);
  if (ec) return make_error(paths.dir + ": cannot create: " + ec.message());
  if (plan.answers) {
    auto saved = save_reference_answers(paths.answers_dir, *plan.answers);
    if (!saved) return saved.error();
  }
  if (!plan.machine_fingerprint_json.empty() && !fs::exists(paths.machine_fingerprint_file, ec))
    FP_TRY_STATUS(write_file_atomic(paths.machine_fingerprint_file, plan.machine_fingerprint_json));
  if (plan.golden) {
    fs::create_directories(fs::path(paths.verdict_file).parent_path(), ec);
    if (ec) return make_error(paths.verdict_file + ": cannot create its folder: " + ec.message());
    if (!plan.case_fingerprint_json.empty())
      FP_TRY_STATUS(write_file_atomic(paths.case_fingerprint_file, plan.case_fingerprint_json));
    FP_TRY_STATUS(write_file_atomic(paths.verdict_file, plan.verdict_json));
    FP_TRY_STATUS(save_golden_atomic(paths.golden_file, *plan.golden));
  }
  return ok_status();
}

Status record_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous, double min_tolerance_rel) {
  FP_TRY(GoldenPlan plan, plan_golden(paths, r, previous, true, true, min_tolerance_rel));
  return write_golden_plan(paths, plan);
}

void compare_goldens(const std::string& golden_root, bool record_missing, RunResult& r, const std::string& golden_id,
                     double min_tolerance_rel) {
  const std::string id = golden_id.empty() ? r.fingerprint_id : golden_id;
  const GoldenPaths paths = golden_paths(golden_root, id, r.case_name);
  r.golden_dir = paths.dir;
  if (!fs::exists(paths.golden_file)) {
    r.golden_status = "missing";
    if (!record_missing || id != r.fingerprint_id) {
      r.failures.push_back("no golden for this machine: " + paths.golden_file + " does not exist (fingerprint " +
                           id + "); review and record one with: flashproof accept " + r.output_dir);
      return;
    }
    if (!r.failures.empty()) {
      r.golden_lines.push_back("no golden recorded: this run failed (a golden is only recorded from a passing run)");
      return;
    }
    if (auto st = record_golden(paths, r, nullptr, min_tolerance_rel); !st) {
      r.failures.push_back("recording the golden failed: " + st.error().message);
      return;
    }
    r.golden_status = "recorded";
    r.golden_lines.push_back("recorded " + paths.golden_file + " and " + std::to_string(r.answers.size()) + " reference answers");
    for (auto& a : r.answers) a.reference = "recorded";
    return;
  }
  auto golden = load_golden(paths.golden_file);
  if (!golden) {
    r.golden_status = "unreadable";
    r.failures.push_back("golden unreadable (left untouched): " + golden.error().message);
    return;
  }
  r.golden_status = "compared";
  if (id != r.fingerprint_id) r.golden_lines.push_back("compared with the goldens of fingerprint " + id + " (baseline)");
  auto recorded = load_golden_fingerprint(paths);
  if (!recorded) {
    r.failures.push_back("golden fingerprint unreadable (left untouched): " + recorded.error().message);
  } else if (*recorded && r.fingerprint.is_object()) {
    auto now = fingerprint_from_json(nlohmann::json::parse(r.fingerprint.dump()), r.output_dir + "/result.json");
    if (now) {
      auto changes = fingerprint_changes(**recorded, *now);
      for (const auto& c : changes)
        r.golden_lines.push_back("fingerprint changed since the golden: " + c.field + ": " +
                                 (c.before.empty() ? "(none)" : c.before) + " -> " + (c.after.empty() ? "(none)" : c.after));
    }
  }
  auto cmp = compare_to_golden(*golden, measured_figures(r.figures));
  if (!cmp) {
    r.failures.push_back("golden comparison: " + cmp.error().message);
    return;
  }
  for (const auto& f : cmp->figures) {
    r.golden_lines.push_back(std::string(to_string(f.status)) + (f.gate ? " [gate] " : " ") + f.message);
    if (f.failed)
      r.failures.push_back("figure " + f.message + " (compare " + paths.golden_file + " with " + r.output_dir + "/result.txt)");
  }
  for (auto& a : r.answers) {
    auto ref = load_reference_answer(paths.answers_dir, a.prompt_id);
    if (!ref) {
      a.reference = "no reference";
      r.failures.push_back("answer " + a.prompt_id + ": no reference answer (" + ref.error().message + ")");
      continue;
    }
    auto c = compare_answer(a.prompt_id, *ref, a.text);
    a.reference = c.identical ? "identical" : "differs";
    a.diff = c.diff;
    if (!c.identical) r.failures.push_back("answer " + a.prompt_id + " differs from its reference:\n" + c.diff);
  }
}

}  // namespace fp
