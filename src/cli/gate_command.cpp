// flashproof gate CASE.json... [--baseline ID]: the upgrade gate (flow/upgrade_gate.h).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.h"
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
  Args args("gate", argc, argv, kUsage);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--baseline") {
      g.baseline = args.value();
    } else if (a == "--golden") {
      g.run.golden_root = args.value();
    } else if (a == "--results") {
      g.run.results_root = args.value();
    } else if (a == "--repetitions") {
      g.run.timed.repetitions = args.whole(0, 100000);
    } else if (a == "--warmup") {
      g.run.timed.warmup = args.whole(0, 100000);
    } else if (a == "--quiet") {
      g.run.quiet = true;
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
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
