// flashproof accept RUNDIR...: shows what a run would change in this machine's goldens and
// reference answers, and writes only what the operator accepts. Refuses when CI is set.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "flow/case_run/golden_record.h"
#include "golden/answers.h"
#include "golden/golden_file.h"
#include "golden/golden_paths.h"
#include "golden/threshold_policy.h"
#include "report/result_file.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const char* kAcceptUsageText =
    "usage: flashproof accept RUNDIR... [--golden DIR | --root DIR] [--only figures|answers] [--yes]\n"
    "Shows every change a run would make to this machine's goldens (figures, and answers as unified\n"
    "diffs), then writes what you accept: with --yes, or after you answer y. Refuses when CI is set.\n"
    "Figures need a run of at least 3 fresh launches (`flashproof run CASE --launches 5`): the golden\n"
    "keeps per figure the median of the launch medians, their spread and the number of launches.\n"
    "  --golden DIR         root of the goldens (default: the suite's golden/)\n"
    FP_ROOT_OPTION_USAGE;

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

// The bytes of a file, or "" when it does not exist (what accept compares before writing).
std::string snapshot(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  auto text = read_file(path);
  return text ? *text : std::string("\x01unreadable");
}

std::string fig_line(char mark, const std::string& name, const std::string& what) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "  %c %-30s ", mark, name.c_str());
  return buf + what + "\n";
}

// Shows the thresholds the plan writes against the previous ones; returns the text.
std::string show_figures(const Golden& planned, const Golden* previous, const std::string& previous_file) {
  std::string out = "figures (medians of launch medians against " +
                    (previous ? previous_file + ", whose direction and gate are kept" : std::string("nothing: a first golden")) + "):\n";
  for (const auto& [name, f] : planned.figures) {
    std::string limits = std::string(f.direction == Direction::lower_is_better ? "lower" : "higher") + " is better" +
                         (f.gate ? ", gate" : "");
    const GoldenFigure* old = previous && previous->figures.count(name) ? &previous->figures.at(name) : nullptr;
    if (!old) {
      out += fig_line('+', name, "new: median " + fixed(f.median, 3) + ", spread " + fixed(f.spread, 3) + ", n " + std::to_string(f.n) + " launches; " + limits);
    } else if (old->median == f.median && old->spread == f.spread && old->n == f.n) {
      out += fig_line('=', name, "unchanged: median " + fixed(f.median, 3) + " (n " + std::to_string(f.n) + ")");
    } else {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.1f%%", old->median != 0 ? 100.0 * (f.median - old->median) / std::fabs(old->median) : 0.0);
      out += fig_line('~', name, "median " + fixed(old->median, 3) + " -> " + fixed(f.median, 3) + " (" + pct + "), spread " +
                                     fixed(old->spread, 3) + " -> " + fixed(f.spread, 3) + ", n " + std::to_string(old->n) + " -> " +
                                     std::to_string(f.n) + "; " + limits);
    }
  }
  if (previous)
    for (const auto& [name, f] : previous->figures)
      if (!planned.figures.count(name))
        out += fig_line('-', name, "removed: this run did not measure it (golden median " + fixed(f.median, 3) + (f.gate ? ", was a gate" : "") + ")");
  return out;
}

std::string share(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
  return buf;
}

// Shows the attention kernel set the plan writes against the previous one.
std::string show_kernel_families(const Golden& planned, const Golden* previous) {
  const auto none = std::map<std::string, GoldenKernelFamily>{};
  const auto& before = previous ? previous->kernel_families : none;
  if (planned.kernel_families.empty() && before.empty()) return "attention kernel set: none (no kernel probe in this run)\n";
  std::string out = "attention kernel set (share of the attention GPU time, median of the probed launches):\n";
  for (const auto& [name, f] : planned.kernel_families) {
    auto it = before.find(name);
    const std::string what = std::string(f.fused ? "fused" : "unfused") + ", n " + std::to_string(f.n) + " probed launches";
    if (it == before.end()) out += fig_line('+', name, "new: " + share(f.share_median) + " (" + what + ")");
    else if (it->second.share_median == f.share_median && it->second.n == f.n) out += fig_line('=', name, "unchanged: " + share(f.share_median));
    else out += fig_line('~', name, share(it->second.share_median) + " -> " + share(f.share_median) + " (" + what + ")");
  }
  for (const auto& [name, f] : before)
    if (!planned.kernel_families.count(name))
      out += fig_line('-', name, "removed: this run did not run it (golden " + share(f.share_median) + ")");
  return out;
}

// result.json's golden.dir: the golden folder the run was compared with ("" when none).
std::string compared_golden_dir(const std::string& result_json) {
  auto text = read_file(result_json);
  if (!text) return "";
  try {
    auto j = nlohmann::json::parse(*text);
    return j.at("golden").at("dir").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return "";
  }
}

bool same_plan(const std::vector<PlannedAnswerChange>& a, const std::vector<PlannedAnswerChange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].prompt_id != b[i].prompt_id || a[i].kind != b[i].kind || a[i].diff != b[i].diff) return false;
  return true;
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
  if (!r->verdict.as_expected) {
    std::cerr << "flashproof accept: " << run_dir << ": the evidence (" << to_string(r->verdict.activity)
              << ") does not match the case's expectation; a golden must not bless that. Fix the deployment or the case.\n";
    return 1;
  }
  const bool figures = only != "answers", answers = only != "figures";
  if (figures && r->launches < static_cast<int>(kMinGoldenLaunches)) {
    std::cerr << "flashproof accept: " << run_dir << " holds " << r->launches << " launch(es); a golden's figures need at least "
              << kMinGoldenLaunches << " (the spread of their medians is its noise band): run `flashproof run " << r->case_file
              << " --launches " << kDefaultGoldenLaunches << "` and accept that run, or keep only the answers with --only answers\n";
    return 1;
  }
  const GoldenPaths paths = golden_paths(golden_root, r->fingerprint_id, r->case_name);
  // Thresholds to keep: this fingerprint's golden, else the one the run was compared with (the
  // upgrade gate's baseline), so an operator's tuned tolerances survive an upgrade.
  std::string previous_file = paths.golden_file;
  const std::string compared_dir = compared_golden_dir(run_dir + "/result.json");
  if (!fs::exists(previous_file) && !compared_dir.empty() && fs::exists(compared_dir + "/" + r->case_name + ".json"))
    previous_file = compared_dir + "/" + r->case_name + ".json";
  std::unique_ptr<Golden> previous;
  if (fs::exists(previous_file)) {
    auto g = load_golden(previous_file);
    if (!g) {
      std::cerr << "flashproof accept: " << g.error().message << " (fix or remove it by hand; it is not overwritten)\n";
      return 2;
    }
    previous = std::make_unique<Golden>(*g);
  }
  const std::string golden_before = snapshot(paths.golden_file);
  auto plan = plan_golden(paths, *r, previous.get(), figures, answers);
  if (!plan) {
    std::cerr << "flashproof accept: " << plan.error().message << "\n";
    return 2;
  }
  std::cout << "case " << r->case_name << " (" << run_dir << ") -> " << paths.dir << "\n";
  bool changes = false;
  if (plan->golden) {
    std::cout << show_figures(*plan->golden, previous.get(), previous_file);
    std::cout << show_kernel_families(*plan->golden, previous.get());
    if (const std::string busy = busy_golden_text(*plan->golden); !busy.empty())
      std::cout << "BUSY RECORDING: this run was " << busy << "\n";
    changes = changes || golden_to_json(*plan->golden) != golden_before;
    std::cout << "files: " << paths.golden_file << (golden_before.empty() ? " (new)" : "") << ", " << paths.verdict_file
              << " (verdict " << to_string(r->verdict.activity)
              << (r->verdict.fused_backends.empty() ? "" : " " + backends_text(r->verdict.fused_backends)) << ", evidence levels "
              << (r->verdict.levels_used.empty() ? std::string("none") : join(r->verdict.levels_used, ", ")) << ")"
              << (plan->case_fingerprint_json.empty() ? "" : ", " + paths.case_fingerprint_file + " (fingerprint " + r->fingerprint_id + ")")
              << "\n";
  }
  if (!plan->machine_fingerprint_json.empty()) {
    std::cout << "new fingerprint folder: " << paths.machine_fingerprint_file << ":\n" << plan->machine_fingerprint_json;
    changes = true;
  }
  std::vector<PlannedAnswerChange> shown_answers;
  if (plan->answers) {
    auto planned = plan_answer_changes(paths.answers_dir, *plan->answers);
    if (!planned) {
      std::cerr << "flashproof accept: " << planned.error().message << "\n";
      return 2;
    }
    shown_answers = *planned;
    std::cout << "answers (" << paths.answers_dir << "):\n";
    for (const auto& c : shown_answers) {
      std::cout << "  " << to_string(c.kind) << " " << c.prompt_id << "\n";
      if (!c.diff.empty()) std::cout << c.diff << "\n";
      changes = changes || c.kind != AnswerChangeKind::unchanged;
    }
  }
  if (!changes) {
    std::cout << "nothing to change: the goldens already hold this run\n";
    return 0;
  }
  if (!confirm(yes)) {
    std::cout << "nothing written (pass --yes, or answer y on a terminal)\n";
    return 0;
  }
  // Write only what was shown: refuse when the goldens changed meanwhile (another accept).
  if (snapshot(paths.golden_file) != golden_before) {
    std::cerr << "flashproof accept: " << paths.golden_file << " changed since it was shown; nothing written, run accept again\n";
    return 2;
  }
  if (plan->answers) {
    auto again = plan_answer_changes(paths.answers_dir, *plan->answers);
    if (!again || !same_plan(*again, shown_answers)) {
      std::cerr << "flashproof accept: " << paths.answers_dir << " changed since it was shown; nothing written, run accept again\n";
      return 2;
    }
  }
  if (auto st = write_golden_plan(paths, *plan); !st) {
    std::cerr << "flashproof accept: " << st.error().message << "\n";
    return 2;
  }
  std::cout << "written: " << paths.dir << "\n";
  return 0;
}

}  // namespace

int accept_command(int argc, char** argv) {
  std::string golden_root, root, only;
  bool yes = false;
  std::vector<std::string> runs;
  Args args("accept", argc, argv, kAcceptUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kAcceptUsageText;
      return 0;
    } else if (a == "--yes") {
      yes = true;
    } else if (a == "--golden" && args.has_value()) {
      golden_root = args.value();
    } else if (a == "--root" && args.has_value()) {
      root = args.value();
    } else if (a == "--only" && args.has_value()) {
      only = args.value();
      if (only != "figures" && only != "answers") args.brief_usage_error("--only " + quote(only) + ": expected figures or answers");
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
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
    std::cerr << "flashproof accept: name at least one run folder (it holds result.json)\n" << kAcceptUsageText;
    return 64;
  }
  if (golden_root.empty()) {
    auto suite = command_suite(root, runs);
    if (!suite) {
      std::cerr << "flashproof accept: " << suite.error().message << "\n";
      return 2;
    }
    golden_root = suite->golden;
  }
  int rc = 0;
  for (const auto& r : runs) rc = std::max(rc, accept_one(r, golden_root, only, yes));
  return rc;
}

}  // namespace fp
