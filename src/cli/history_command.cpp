// flashproof history [--results DIR] [-n N] [CASE...]: the runs kept on this machine, newest last.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "flow/history.h"
#include "util/text.h"

namespace fp {

int history_command(int argc, char** argv) {
  std::string results_root = FLASHPROOF_SOURCE_DIR "/results";
  size_t limit = 10;
  std::vector<std::string> cases;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << "usage: flashproof history [--results DIR] [-n N] [CASE...]\n"
                   "Lists the last N runs (default 10) of each case from <results>/history.tsv, newest last,\n"
                   "with fingerprint, status and run folder. `flashproof diff --last` compares the last two.\n";
      return 0;
    } else if ((a == "--results" || a == "-n") && i + 1 < argc) {
      std::string v = argv[++i];
      if (a == "--results") {
        results_root = v;
      } else {
        char* end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 1) {
          std::cerr << "flashproof history: -n " << quote(v) << ": expected a whole number >= 1\n";
          return 64;
        }
        limit = static_cast<size_t>(n);
      }
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "flashproof history: unknown or incomplete option " << quote(a) << "\n";
      return 64;
    } else {
      cases.push_back(a);
    }
  }
  auto history = load_history(results_root);
  if (!history) {
    std::cerr << "flashproof history: " << history.error().message << "\n";
    return 2;
  }
  if (cases.empty()) cases = cases_in_history(*history);
  if (cases.empty()) std::cout << history_path(results_root) << ": no runs recorded yet\n";
  for (const auto& name : cases) {
    auto runs = runs_of_case(*history, name);
    std::cout << name << " (" << runs.size() << " runs)\n";
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

}  // namespace fp
