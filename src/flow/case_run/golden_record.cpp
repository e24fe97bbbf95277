#include "flow/case_run/golden_record.h"

#include <cmath>
#include <filesystem>

#include "case/case_file.h"
#include "case/effect_defaults.h"
#include "golden/answers.h"
#include "golden/kernel_families.h"
#include "util/text.h"

namespace fp {
namespace {
namespace fs = std::filesystem;

std::string verdict_to_json(const RunResult& r) {
  nlohmann::ordered_json j;
  j["state"] = to_string(r.verdict.activity);
  j["backend"] = backends_text(r.verdict.fused_backends);
  j["levels_used"] = r.verdict.levels_used;
  j["degraded"] = r.verdict.degraded.has_value();
  return j.dump(2) + "\n";
}

std::string fingerprint_text(const nlohmann::ordered_json& j) { return j.dump(2) + "\n"; }

// The figure's minimum effect as its result recorded it; a result file older than minimum effects
// takes the default with the figure's floor.
MinEffect recorded_min_effect(const FigureResult& f) {
  return f.min_effect.known() ? f.min_effect : MinEffect{kDefaultMinEffect, default_floor(f.name)};
}

}  // namespace

std::map<std::string, FigurePolicy> figure_policies(const std::vector<FigureResult>& figures) {
  std::map<std::string, FigurePolicy> p;
  for (const auto& f : figures)
    p[f.name] = FigurePolicy{f.lower_is_better ? Direction::lower_is_better : Direction::higher_is_better, f.gate,
                             recorded_min_effect(f), false};
  return p;
}

std::vector<Measured> measured_figures(const std::vector<FigureResult>& figures) {
  std::vector<Measured> m;
  for (const auto& f : figures) m.push_back({f.name, f.launch_medians, recorded_min_effect(f), f.gate ? std::nullopt : f.guard});
  return m;
}

Result<GoldenPlan> plan_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous, bool figures,
                               bool answers, bool verdict) {
  GoldenPlan plan;
  if (figures) {
    std::vector<Measured> measured = measured_figures(r.figures);
    // An attached server's launch medians are separated rounds of one run (flow/passes/attached_pass.h).
    if (!r.attached.empty())
      for (Measured& m : measured) m.band_source = BandSource::rounds;
    FP_TRY(Golden g, golden_from_measured(r.fingerprint_id, measured, figure_policies(r.figures), previous));
    g.kernel_families = golden_kernel_families(r.kernel_families);
    plan.golden = g;
  }
  if (figures || verdict) {
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
  if (!plan.verdict_json.empty()) {
    fs::create_directories(fs::path(paths.verdict_file).parent_path(), ec);
    if (ec) return make_error(paths.verdict_file + ": cannot create its folder: " + ec.message());
    if (!plan.case_fingerprint_json.empty())
      FP_TRY_STATUS(write_file_atomic(paths.case_fingerprint_file, plan.case_fingerprint_json));
    FP_TRY_STATUS(write_file_atomic(paths.verdict_file, plan.verdict_json));
  }
  if (plan.golden) FP_TRY_STATUS(save_golden_atomic(paths.golden_file, *plan.golden));
  return ok_status();
}

Status record_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous) {
  FP_TRY(GoldenPlan plan, plan_golden(paths, r, previous, true, true));
  return write_golden_plan(paths, plan);
}

}  // namespace fp
