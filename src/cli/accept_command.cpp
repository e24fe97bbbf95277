// flashproof accept RUNDIR...: shows what a run would change in this machine's goldens and
// reference answers, and writes only what the operator accepts. Refuses when CI is set.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "flow/golden_step.h"
#include "golden/answers.h"
#include "report/result_file.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const char* kUsage =
    "usage: flashproof accept RUNDIR... [--golden DIR] [--only figures|answers] [--yes]\n"
    "Shows every change a run would make to this machine's goldens (figures, and answers as unified\n"
    "diffs), then writes what you accept: with --yes, or after you answer y. Refuses when CI is set.\n";

bool ci_is_set() {
  const char* ci = std::getenv("CI");
  if (!ci) return false;
  std::string v = ci;
  return !v.empty() && v != "0" && v != "false";
}

bool confirm(bool yes) {
  if (yes) return true;
  if (!::isatty(0)) return false;
  std::cout << "write these changes? [y/N] " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "y" || answer == "Y" || answer == "yes";
}

int accept_one(const std::string& run_dir, const std::string& golden_root, const std::string& only, bool yes) {
  auto r = load_result_json(run_dir + "/result.json");
  if (!r) {
    std::cerr << "flashproof accept: " << r.error().message << "\n";
    return 2;
  }
  if (!r->complete) {
    std::cerr << "flashproof accept: " << run_dir << " is an incomplete run; nothing to accept\n";
    return 1;
  }
  if (!r->verdict_as_expected) {
    std::cerr << "flashproof accept: " << run_dir << ": the evidence (" << r->verdict
              << ") does not match the case's expectation; a golden must not bless that. Fix the deployment or the case.\n";
    return 1;
  }
  const GoldenPaths paths = golden_paths(golden_root, r->fingerprint_id, r->case_name);
  std::unique_ptr<Golden> previous;
  if (fs::exists(paths.golden_file)) {
    auto g = load_golden(paths.golden_file);
    if (!g) {
      std::cerr << "flashproof accept: " << g.error().message << " (fix or remove it by hand; it is not overwritten)\n";
      return 2;
    }
    previous = std::make_unique<Golden>(*g);
  }
  std::cout << "case " << r->case_name << " (" << run_dir << ") -> " << paths.dir << "\n";
  if (only != "answers") {
    std::cout << "figures:\n";
    for (const auto& f : r->figures) {
      double old = NAN;
      if (previous && previous->figures.count(f.name)) old = previous->figures.at(f.name).median;
      char buf[200];
      if (std::isnan(old))
        std::snprintf(buf, sizeof buf, "  + %-32s new median %.3f (n=%zu)\n", f.name.c_str(), f.summary.median, f.summary.n);
      else
        std::snprintf(buf, sizeof buf, "  ~ %-32s median %.3f -> %.3f (%+.1f%%, n=%zu)\n", f.name.c_str(), old,
                      f.summary.median, old != 0 ? 100.0 * (f.summary.median - old) / old : 0.0, f.summary.n);
      std::cout << buf;
    }
  }
  if (only != "figures") {
    std::map<std::string, std::string> answers;
    for (const auto& a : r->answers) answers[a.prompt_id] = a.text;
    auto plan = plan_answer_changes(paths.answers_dir, answers);
    if (!plan) {
      std::cerr << "flashproof accept: " << plan.error().message << "\n";
      return 2;
    }
    std::cout << "answers:\n";
    for (const auto& c : *plan) {
      std::cout << "  " << to_string(c.kind) << " " << c.prompt_id << "\n";
      if (!c.diff.empty()) std::cout << c.diff << "\n";
    }
  }
  if (!confirm(yes)) {
    std::cout << "nothing written (pass --yes, or answer y on a terminal)\n";
    return 0;
  }
  Status st = ok_status();
  if (only == "answers") {
    std::map<std::string, std::string> answers;
    for (const auto& a : r->answers) answers[a.prompt_id] = a.text;
    auto saved = save_reference_answers(paths.answers_dir, answers);
    if (!saved) st = saved.error();
  } else if (only == "figures") {
    RunResult figures_only = *r;
    figures_only.answers.clear();
    st = record_golden(paths, figures_only, previous.get());
  } else {
    st = record_golden(paths, *r, previous.get());
  }
  if (!st) {
    std::cerr << "flashproof accept: " << st.error().message << "\n";
    return 2;
  }
  std::cout << "written: " << paths.dir << "\n";
  return 0;
}

}  // namespace

int accept_command(int argc, char** argv) {
  std::string golden_root = FLASHPROOF_SOURCE_DIR "/golden", only;
  bool yes = false;
  std::vector<std::string> runs;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--yes") {
      yes = true;
    } else if (a == "--golden" && i + 1 < argc) {
      golden_root = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
      if (only != "figures" && only != "answers") {
        std::cerr << "flashproof accept: --only " << quote(only) << ": expected figures or answers\n";
        return 64;
      }
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "flashproof accept: unknown option " << quote(a) << "\n" << kUsage;
      return 64;
    } else {
      runs.push_back(a);
    }
  }
  if (ci_is_set()) {
    std::cerr << "flashproof accept: refusing: CI is set (" << std::getenv("CI")
              << "). Goldens change only by an operator's review, never from CI.\n";
    return 3;
  }
  if (runs.empty()) {
    std::cerr << "flashproof accept: name at least one run folder (it holds result.json)\n" << kUsage;
    return 64;
  }
  int rc = 0;
  for (const auto& r : runs) rc = std::max(rc, accept_one(r, golden_root, only, yes));
  return rc;
}

}  // namespace fp
