// flashproof diff OLD NEW | flashproof diff --last [CASE...]: two results of the same cases side by
// side (report/result_diff.h), verdict changes first.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "flow/case_run/golden_record.h"
#include "history/history.h"
#include "report/result_diff.h"
#include "report/result_file.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kDiffUsageText =
    "usage: flashproof diff OLD NEW\n"
    "       flashproof diff --last [--results DIR | --root DIR] [CASE...]\n"
    "Compares two results: verdict and status changes first, then the fingerprint field by field, the\n"
    "figures side by side with their change (judged like a golden: tolerance and noise), and changed\n"
    "answers as unified diffs. OLD and NEW are each a result.json, a run folder, a case folder (its\n"
    "latest run) or a folder of case folders (the latest run of each case, paired by case name).\n"
    "--last compares, per case, the last run in <results>/history.tsv with the one before it (across\n"
    "fingerprints: the night before an upgrade counts); <results> is the suite's results/ unless --results.\n"
    "The attention kernel set is compared family by family (a kernel swap is named).\n"
    "exit: 0 no verdict change, gated regression, kernel swap or changed answer; 1 some; 2 bad input; 64 usage\n";

Result<std::map<std::string, RunResult>> load_side(const std::string& path) {
  FP_TRY(std::vector<std::string> files, resolve_results(path));
  std::map<std::string, RunResult> out;
  for (const auto& f : files) {
    FP_TRY(RunResult r, load_result_json(f));
    out[r.case_name] = r;
  }
  return out;
}

int print(const std::vector<ResultDiff>& diffs) {
  std::cout << format_result_diffs(diffs);
  for (const auto& d : diffs)
    if (d.verdict_changed() || d.regressed() || d.answers_changed() || d.kernels_changed()) return 1;
  return 0;
}

int diff_paths(const std::string& old_path, const std::string& new_path) {
  auto olds = load_side(old_path);
  auto news = load_side(new_path);
  for (const auto* side : {&olds, &news})
    if (!*side) {
      std::cerr << "flashproof diff: " << side->error().message << "\n";
      return 2;
    }
  std::vector<ResultDiff> diffs;
  if (olds->size() == 1 && news->size() == 1) {
    const RunResult& o = olds->begin()->second;
    diffs.push_back(diff_results(o, news->begin()->second, figure_policies(o.figures)));
    return print(diffs);
  }
  for (const auto& [name, o] : *olds) {
    auto it = news->find(name);
    if (it == news->end()) {
      std::cout << "case " << name << ": only in " << old_path << "\n";
      continue;
    }
    diffs.push_back(diff_results(o, it->second, figure_policies(o.figures)));
  }
  for (const auto& [name, n] : *news)
    if (!olds->count(name)) std::cout << "case " << name << ": only in " << new_path << "\n";
  if (diffs.empty()) {
    std::cerr << "flashproof diff: no case is in both " << old_path << " and " << new_path << "\n";
    return 2;
  }
  return print(diffs);
}

int diff_last(const std::string& results_root, std::vector<std::string> cases) {
  auto history = load_history(results_root);
  if (!history) {
    std::cerr << "flashproof diff: " << history.error().message << "\n";
    return 2;
  }
  if (cases.empty()) cases = cases_in_history(*history);
  if (cases.empty()) {
    std::cerr << "flashproof diff: " << history_path(results_root) << ": no runs recorded yet\n";
    return 2;
  }
  std::vector<ResultDiff> diffs;
  for (const auto& name : cases) {
    auto runs = runs_of_case(*history, name);
    if (runs.size() < 2) {
      std::cout << "case " << name << ": " << runs.size() << " run(s) in " << history_path(results_root)
                << "; nothing to compare yet\n";
      continue;
    }
    auto o = load_result_json(run_dir_path(results_root, runs[runs.size() - 2]) + "/result.json");
    auto n = load_result_json(run_dir_path(results_root, runs.back()) + "/result.json");
    for (const auto* r : {&o, &n})
      if (!*r) {
        std::cerr << "flashproof diff: " << r->error().message << "\n";
        return 2;
      }
    diffs.push_back(diff_results(*o, *n, figure_policies(o->figures)));
  }
  if (diffs.empty()) return 0;
  return print(diffs);
}

}  // namespace

int diff_command(int argc, char** argv) {
  std::string results_root, root;
  bool last = false;
  std::vector<std::string> operands;
  Args args("diff", argc, argv, kDiffUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kDiffUsageText;
      return 0;
    } else if (a == "--last") {
      last = true;
    } else if (a == "--results") {
      results_root = args.value();
    } else if (a == "--root") {
      root = args.value();
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
    } else {
      operands.push_back(a);
    }
  }
  if (last && results_root.empty()) {
    auto suite = command_suite(root);
    if (!suite) {
      std::cerr << "flashproof diff: " << suite.error().message << "\n";
      return 2;
    }
    results_root = suite->results;
  }
  if (last) return diff_last(results_root, operands);
  if (operands.size() != 2) {
    std::cerr << "flashproof diff: give OLD and NEW (or --last)\n" << kDiffUsageText;
    return 64;
  }
  return diff_paths(operands[0], operands[1]);
}

}  // namespace fp
