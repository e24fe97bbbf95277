#include "flow/golden_step.h"

#include <cmath>
#include <filesystem>

#include "golden/answers.h"
#include "util/text.h"

namespace fp {
namespace {
namespace fs = std::filesystem;
}

GoldenPaths golden_paths(const std::string& golden_root, const std::string& fingerprint_id, const std::string& case_name) {
  GoldenPaths p;
  p.dir = golden_root + "/" + fingerprint_id;
  p.golden_file = p.dir + "/" + case_name + ".json";
  p.answers_dir = p.dir + "/" + case_name + "/answers";
  return p;
}

std::map<std::string, FigurePolicy> figure_policies(const std::vector<FigureResult>& figures) {
  std::map<std::string, FigurePolicy> p;
  for (const auto& f : figures) {
    FigurePolicy fp;
    fp.direction = f.lower_is_better ? Direction::lower_is_better : Direction::higher_is_better;
    fp.gate = f.gate;
    fp.tolerance_rel = 0.5;
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

Status record_golden(const GoldenPaths& paths, const RunResult& r, const Golden* previous) {
  FP_TRY(Golden g, golden_from_measured(r.fingerprint_id, measured_figures(r.figures), figure_policies(r.figures), previous));
  std::error_code ec;
  fs::create_directories(paths.dir, ec);
  if (ec) return make_error(paths.dir + ": cannot create: " + ec.message());
  std::map<std::string, std::string> answers;
  for (const auto& a : r.answers) answers[a.prompt_id] = a.text;
  FP_TRY_STATUS(save_golden_atomic(paths.golden_file, g));
  auto saved = save_reference_answers(paths.answers_dir, answers);
  if (!saved) return saved.error();
  const std::string fp_file = paths.dir + "/fingerprint.json";
  if (!fs::exists(fp_file) && !r.fingerprint.empty())
    FP_TRY_STATUS(write_file_atomic(fp_file, r.fingerprint.dump(2) + "\n"));
  return ok_status();
}

void compare_goldens(const std::string& golden_root, bool record_missing, RunResult& r) {
  const GoldenPaths paths = golden_paths(golden_root, r.fingerprint_id, r.case_name);
  r.golden_dir = paths.dir;
  if (!fs::exists(paths.golden_file)) {
    r.golden_status = "missing";
    if (!record_missing) {
      r.failures.push_back("no golden for this machine: " + paths.golden_file + " does not exist (fingerprint " +
                           r.fingerprint_id + "); review and record one with: flashproof accept " + r.output_dir);
      return;
    }
    if (!r.failures.empty()) {
      r.golden_lines.push_back("no golden recorded: this run failed (a golden is only recorded from a passing run)");
      return;
    }
    if (auto st = record_golden(paths, r, nullptr); !st) {
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
