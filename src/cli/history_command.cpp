// flashproof history [--results DIR] [-n N] [CASE...]: the runs kept on this machine, newest last.
// flashproof history --changes [--results DIR] [CASE...]: the nights a figure's level stepped.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "golden/fingerprint.h"
#include "history/history.h"
#include "history/history_changes.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kHistoryUsageText =
    "usage: flashproof history [--results DIR | --root DIR] [-n N] [CASE...]\n"
    "       flashproof history --changes [--results DIR | --root DIR] [CASE...]\n"
    "Lists the last N runs (default 10) of each case from <results>/history.tsv, newest last,\n"
    "with fingerprint, status and run folder. `flashproof diff --last` compares the last two.\n"
    "--changes finds the nights where a figure's level stepped: per case, every run in history.tsv\n"
    "(oldest first, across fingerprints), one series per figure (each run's median), change points by\n"
    "E-divisive means with a permutation test (199 shuffles, p <= 0.01, at least 3 runs either side of\n"
    "a step). One line per change point, gated figures first: the night (the first run after the step),\n"
    "the figure, median before -> after, the p-value, and the fingerprint fields that changed that night.\n"
    "Runs whose result.json is missing or unreadable are skipped with a note. <results> is the suite's\n"
    "results/ (flashproof-suite.json, from the working directory up, or --root DIR) unless --results.\n"
    "exit: 0 (informational; --changes too); 2 unreadable history; 64 usage\n";

// "runtime_build: 7000 -> 7010; runtime_version: ... -> ..." between two runs: the full fingerprints
// field by field (golden/fingerprint.h) when both results carry them, else the ids.
std::string fingerprint_change(const NightRun& before, const NightRun& at) {
  if (before.fingerprint.is_object() && at.fingerprint.is_object()) {
    auto a = fingerprint_from_json(nlohmann::json::parse(before.fingerprint.dump()), before.result_path + ": fingerprint_detail");
    auto b = fingerprint_from_json(nlohmann::json::parse(at.fingerprint.dump()), at.result_path + ": fingerprint_detail");
    if (a && b) {
      const auto changes = fingerprint_changes(*a, *b);
      if (changes.empty()) return "fingerprint unchanged";
      std::vector<std::string> lines = split_lines(describe_changes(changes, ""));
      while (!lines.empty() && lines.back().empty()) lines.pop_back();
      return "fingerprint: " + join(lines, "; ");
    }
  }
  if (before.fingerprint_id != at.fingerprint_id)
    return "fingerprint: id " + before.fingerprint_id + " -> " + at.fingerprint_id + " (no fingerprint_detail to compare)";
  return "fingerprint unchanged";
}

std::string change_line(const CaseNights& nights, const FigureChange& c) {
  const ChangePoint& p = c.point;
  std::string relative = "n/a";
  if (!std::isnan(p.relative_change)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * p.relative_change);
    relative = buf;
  }
  const bool worse = c.lower_is_better ? p.median_after > p.median_before : p.median_after < p.median_before;
  char pbuf[32];
  std::snprintf(pbuf, sizeof pbuf, "%.3f", p.p_value);
  return "  " + nights.runs[c.run_at].entry.finished_utc + "  " + c.figure + (c.gate ? " (gate)" : "") + "  " + fixed(p.median_before, 3) +
         " -> " + fixed(p.median_after, 3) + " (" + relative + (worse ? ", worse" : ", better") + ")  p=" + pbuf + "  " +
         "verdict that night: " + nights.runs[c.run_at].entry.status + "  " +
         fingerprint_change(nights.runs[c.run_before], nights.runs[c.run_at]) + "\n";
}

// The history and the cases to show (every case in it when none is named); nullopt after printing
// why the history cannot be read.
std::optional<std::vector<HistoryEntry>> history_and_cases(const std::string& results_root,
                                                           std::vector<std::string>& cases) {
  auto history = load_history(results_root);
  if (!history) {
    std::cerr << "flashproof history: " << history.error().message << "\n";
    return std::nullopt;
  }
  if (cases.empty()) cases = cases_in_history(*history);
  if (cases.empty()) std::cout << history_path(results_root) << ": no runs recorded yet\n";
  return *history;
}

int print_changes(const std::string& results_root, std::vector<std::string> cases) {
  auto history = history_and_cases(results_root, cases);
  if (!history) return 2;
  const ChangePointOptions options;
  for (const auto& name : cases) {
    if (runs_of_case(*history, name).empty()) {
      std::cout << "case " << name << ": no runs in " << history_path(results_root) << "\n";
      continue;
    }
    const CaseNights nights = load_case_nights(results_root, *history, name);
    const auto changes = find_figure_changes(nights, options);
    const std::string runs = std::to_string(nights.runs.size()) + (nights.runs.size() == 1 ? " run" : " runs");
    const std::string skipped = nights.skipped.empty() ? "" : " (" + std::to_string(nights.skipped.size()) + " skipped)";
    if (changes.empty()) {
      std::cout << "case " << name << ": no change points in " << runs << skipped;
      if (nights.runs.size() < 2 * options.min_segment)
        std::cout << "; a step shows once " << options.min_segment << " runs either side of it are in";
      std::cout << "\n";
    } else {
      std::cout << "case " << name << ": " << changes.size() << (changes.size() == 1 ? " change point" : " change points")
                << " in " << runs << skipped << "\n";
      for (const auto& c : changes) std::cout << change_line(nights, c);
    }
    for (const auto& note : nights.skipped) std::cout << "  skipped " << note << "\n";
  }
  std::cout.flush();
  return 0;
}

int list_runs(const std::string& results_root, size_t limit, std::vector<std::string> cases) {
  auto history = history_and_cases(results_root, cases);
  if (!history) return 2;
  std::cout.flush();
  for (const auto& name : cases) {
    auto runs = runs_of_case(*history, name);
    std::printf("%s (%zu runs)\n", name.c_str(), runs.size());
    size_t from = runs.size() > limit ? runs.size() - limit : 0;
    for (size_t i = from; i < runs.size(); ++i) {
      const char* tag = i + 1 == runs.size() ? "latest  " : i + 2 == runs.size() ? "previous" : "        ";
      std::printf("  %s %s %-10s %s  %s\n", tag, runs[i].finished_utc.c_str(), runs[i].status.c_str(),
                  runs[i].fingerprint.c_str(), run_dir_path(results_root, runs[i]).c_str());
    }
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int history_command(int argc, char** argv) {
  std::string results_root, root;
  int limit = 0;
  bool changes = false;
  std::vector<std::string> cases;
  Args args("history", argc, argv, kHistoryUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kHistoryUsageText;
      return 0;
    } else if (a == "--results") {
      results_root = args.value();
    } else if (a == "--root") {
      root = args.value();
    } else if (a == "-n") {
      limit = args.whole(1, 1000000);
    } else if (a == "--changes") {
      changes = true;
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
    } else {
      cases.push_back(a);
    }
  }
  if (changes && limit) args.usage_error("-n limits the listing; --changes reads every run of a case");
  if (results_root.empty()) {
    auto suite = command_suite(root);
    if (!suite) {
      std::cerr << "flashproof history: " << suite.error().message << "\n";
      return 2;
    }
    results_root = suite->results;
  }
  if (changes) return print_changes(results_root, cases);
  return list_runs(results_root, limit ? static_cast<size_t>(limit) : 10, cases);
}

}  // namespace fp
