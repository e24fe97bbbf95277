// flashproof gate CASE.json... [--baseline ID]: the upgrade gate (flow/upgrade_gate.h).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "flow/upgrade_gate.h"
#include "runtime/process.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kUsage =
    "usage: flashproof gate CASE.json... [options]\n"
    "The upgrade gate: says what changed between this fingerprint and the baseline's (field by field),\n"
    "runs every case against the baseline's goldens and answers, proves again that fused attention is\n"
    "active, and fails on any lost kernel, regression beyond tolerance or changed answer.\n\n"
    "options:\n"
    "  --baseline ID        compare with golden/ID/ (default: the newest other fingerprint folder on this\n"
    "                       hardware that has goldens for these cases; else this fingerprint's own)\n"
    "  --golden DIR         root of the goldens (default: <repo>/golden)\n"
    "  --results DIR        root of the results history (default: <repo>/results)\n"
    "  --repetitions N      override the cases' plan.repetitions\n"
    "  --warmup N           override the cases' plan.warmup\n"
    "  --quiet              no per-case progress lines\n"
    "Self-test cases (with a \"ctest\" block) are skipped. The report is printed and written to\n"
    "<results>/<fingerprint id>/gate-<stamp>-<pid>.txt.\n"
    "exit: 0 pass, 1 fail, 2 incomplete or bad input, 64 usage, 125 every case skipped\n";

}  // namespace

int gate_command(int argc, char** argv) {
  GateOptions g;
  std::vector<std::string> cases;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "flashproof gate: " << name << " needs a value\n" << kUsage;
        std::exit(64);
      }
      return argv[++i];
    };
    auto count = [&](const char* name) {
      std::string v = value(name);
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0 || n > 100000) {
        std::cerr << "flashproof gate: " << name << " " << quote(v) << ": expected a whole number 0..100000\n";
        std::exit(64);
      }
      return static_cast<int>(n);
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--baseline") {
      g.baseline = value("--baseline");
    } else if (a == "--golden") {
      g.run.golden_root = value("--golden");
    } else if (a == "--results") {
      g.run.results_root = value("--results");
    } else if (a == "--repetitions") {
      g.run.timed.repetitions = count("--repetitions");
    } else if (a == "--warmup") {
      g.run.timed.warmup = count("--warmup");
    } else if (a == "--quiet") {
      g.run.quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "flashproof gate: unknown option " << quote(a) << "\n" << kUsage;
      return 64;
    } else {
      cases.push_back(a);
    }
  }
  if (cases.empty()) {
    std::cerr << "flashproof gate: name at least one case file, e.g. cases/*.json\n" << kUsage;
    return 64;
  }
  install_child_cleanup_handlers();
  GateReport report = run_upgrade_gate(cases, g, std::cout);
  return report.exit_code;
}

}  // namespace fp
