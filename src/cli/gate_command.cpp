// flashproof gate CASE.json... --baseline-runtime OLD [--candidate-runtime NEW]: the side-by-side
// gate (flow/gates/build_gate.h); without --baseline-runtime, the gate against stored goldens
// (flow/gates/upgrade_gate.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "flow/gates/build_gate.h"
#include "flow/gates/upgrade_gate.h"
#include "runtime/process.h"
#include "util/cpu_list.h"
#include "util/text.h"

namespace fp {
namespace {

// The usage text keeps one printed line per source line.
// clang-format off
const char* kGateUsageText =
    "usage: flashproof gate CASE.json... --baseline-runtime OLD [--candidate-runtime NEW] [options]\n"
    "       flashproof gate CASE.json... [--baseline ID] [options]\n"
    "The upgrade gate.\n\n"
    "Side by side (the stronger test, when the old build is still at hand): the old build (OLD) and the new\n"
    "one (NEW, default: the runtime the cases use now) run alternately on this machine, one fresh launch per\n"
    "arm and block, blocks in pairs AB BA or BA AB at random, the same prompts in the same order; every\n"
    "gated figure is compared paired (per block and prompt) and ends as regression, no regression\n"
    "(smaller than the case's minimum effect) or unresolved at looks fixed in advance (4, 6, 8, 12, 16, 24,\n"
    "32, ... blocks and the budget's last; docs/gate-design.md), while any is unresolved, up to the case's\n"
    "plan.budget_s. Fused\n"
    "attention is proven in both builds and must not be lost; the answers must not change. OLD and NEW are\n"
    "each an executable or a prefix folder laid out as ci/setup.sh lays it out (usr/bin/<runtime>, started\n"
    "through the prefix's own loader when it has one).\n"
    "  --baseline-runtime OLD     the old build (required for this mode)\n"
    "  --candidate-runtime NEW    the new build (default: as the cases resolve their runtime)\n"
    "  --blocks N                 first look after N blocks (even, at least 4; default plan.blocks, 4)\n"
    "  --max-blocks N             at most N blocks (default plan.max_blocks, 200)\n"
    "  --budget SECONDS           time budget per case for the timed blocks (default plan.budget_s; without\n"
    "                             one, 40 blocks at the block time the first look measured, at least 180 s);\n"
    "                             the gate stops earlier when a decision would need more than twice that\n"
    "                             even with the change a standard error nearer to a decision\n"
    "  --rounds N                 measured rounds per launch (default plan.repetitions)\n"
    "  --decode-probes N          after each measured request, N decode probes: the prompt again from the\n"
    "                             runtime's prompt cache, itl_mean_ms from them (default 4 where itl_mean_ms is gated\n"
    "                             and the runtime data has decode_probe, else 0)\n"
    "  --min-effect FIGURE=X[:F]  smallest relative worsening worth failing, e.g. ttft_ms=0.05, and its floor F in the\n"
    "                             figure's unit (ttft_ms=0.05:2: at least 2 ms); without :F the case's or default floor\n"
    "  --candidate-cpu-share X    calibration: run the candidate's timed launches under a CPU quota of X\n"
    "                             (0 < X < 1) of this machine's CPUs: a real, exactly sized slowdown\n"
    "  --baseline-cpu-share X     the same for the baseline\n"
    "  --candidate-prompt-scale X calibration on a GPU box: the candidate's long prompt X times longer\n"
    "                             (more real prompt tokens; the answers are then not compared)\n"
    "  --runtime-cpus LIST        pin both builds to these CPUs (e.g. 0-13, the GPU's NUMA node) and the\n"
    "                             client to the others; default: with 4 or more CPUs the client gets the\n"
    "                             last one and the runtime the rest. A pinned runtime gets one thread\n"
    "                             per CPU (llama-server: -t N) unless the case sets its threads\n"
    "  --one-at-a-time            never have both builds up at once (default: from the second block, where\n"
    "                             the first showed room for both, both launches are up and their requests\n"
    "                             alternate, so that the machine's own drift weighs on both alike)\n"
    "  --golden DIR               the golden root (default: the suite's golden/): on CUDA the baseline's golden\n"
    "                             there sizes host-clock figures from their recorded spread (else 25%)\n"
    "exit: 0 no regression, 1 regression (a gated figure, a lost kernel or a changed answer), 2 incomplete\n"
    "      or bad input, 3 unresolved within the budget, 64 usage, 125 every case skipped, 128+N interrupted\n"
    "      by signal N (gate.json says so)\n\n"
    "Against stored goldens (when the old build is gone): says what changed between this fingerprint and\n"
    "the baseline's (field by field), runs every case against the baseline's goldens and answers, proves\n"
    "again that fused attention is active, and fails on any lost kernel, regression beyond tolerance or\n"
    "changed answer.\n\n"
    "options:\n"
    "  --baseline ID        compare with golden/ID/ (default: the newest other fingerprint folder on this\n"
    "                       hardware that has goldens for these cases; else this fingerprint's own)\n"
    "  --golden DIR         root of the goldens (default: the suite's golden/)\n"
    "  --results DIR        root of the results history (default: the suite's results/)\n"
    FP_ROOT_OPTION_USAGE
    "  --repetitions N      override the cases' plan.repetitions\n"
    "  --warmup N           override the cases' plan.warmup\n"
    "  --launches N         fresh launches per case (default 1): the median of their medians is compared\n"
    "  --reference DIR      before/after (a driver bump): compare with the fresh reference that\n"
    "                       ci/driver-bump.sh before recorded in DIR (its golden root); a gated figure\n"
    "                       beyond its minimum effect but within the noise band is unresolved (exit 3)\n"
    "  --quiet              no per-case progress lines\n"
    "Both modes:\n"
    "  --rehash             read the model files again for their sha256 (not from the hash cache)\n"
    "Self-test cases (with a \"ctest\" block) are skipped. The report is printed and written to\n"
    "<results>/<fingerprint id>/gate-<stamp>-<pid>.txt.\n"
    "exit: 0 pass, 1 fail, 2 incomplete or bad input, 3 unresolved (--reference only), 64 usage, 125 every case skipped\n";
// clang-format on

}  // namespace

int gate_command(int argc, char** argv) {
  GateOptions g;
  BuildGateOptions b;
  bool side_by_side = false;
  std::vector<std::string> cases;
  std::string root;
  Args args("gate", argc, argv, kGateUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kGateUsageText;
      return 0;
    } else if (a == "--baseline") {
      g.baseline = args.value();
    } else if (a == "--baseline-runtime") {
      b.baseline_runtime = args.value();
      side_by_side = true;
    } else if (a == "--candidate-runtime") {
      b.candidate_runtime = args.value();
    } else if (a == "--blocks") {
      b.blocks = args.whole(2, 10000);
      if (b.blocks % 2) args.usage_error("--blocks " + std::to_string(b.blocks) + ": expected an even number (ABBA order)");
    } else if (a == "--max-blocks") {
      b.max_blocks = args.whole(2, 10000);
    } else if (a == "--budget") {
      b.budget_s = args.number(1, 7 * 86400, "seconds");
    } else if (a == "--rounds") {
      b.rounds = args.whole(1, 100000);
    } else if (a == "--min-effect") {
      // FIGURE=FRACTION or FIGURE=FRACTION:FLOOR (the floor in the figure's unit)
      const std::string v = args.value();
      const auto eq = v.find('=');
      char* end = nullptr;
      const double x = eq == std::string::npos ? 0 : std::strtod(v.c_str() + eq + 1, &end);
      double floor = std::numeric_limits<double>::quiet_NaN();
      bool ok = eq != std::string::npos && eq > 0 && end && x > 0 && x <= 10;
      if (ok && *end == ':') {
        char* fend = nullptr;
        floor = std::strtod(end + 1, &fend);
        ok = fend && fend != end + 1 && !*fend && floor >= 0 && std::isfinite(floor);
      } else if (ok) {
        ok = !*end;
      }
      if (!ok)
        args.usage_error("--min-effect " + quote(v) + ": expected FIGURE=FRACTION or FIGURE=FRACTION:FLOOR, e.g. ttft_ms=0.05 or ttft_ms=0.05:2 (floor in ms)");
      b.min_effect[v.substr(0, eq)] = MinEffect{x, floor};
    } else if (a == "--candidate-prompt-scale") {
      b.candidate_prompt_scale = args.number(0.1, 100, "e.g. 1.02 for 2% more document characters");
    } else if (a == "--candidate-cpu-share" || a == "--baseline-cpu-share") {
      const double x = args.number(0.01, 0.999, "a fraction of the machine's CPU time, e.g. 0.95");
      (a == "--candidate-cpu-share" ? b.candidate_cpu_share : b.baseline_cpu_share) = x;
    } else if (a == "--runtime-cpus") {
      const std::string v = args.value();
      auto list = parse_cpu_list(v, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
      if (!list) args.usage_error("--runtime-cpus: " + list.error().message);
      b.runtime_cpus = *list;
      if (b.runtime_cpus.size() >= std::max(1u, std::thread::hardware_concurrency()))
        args.usage_error("--runtime-cpus " + quote(v) + ": every CPU; leave at least one for the client");
    } else if (a == "--decode-probes") {
      b.decode_probes = args.whole(0, 100);
    } else if (a == "--one-at-a-time") {
      b.one_at_a_time = true;
    } else if (a == "--golden") {
      g.run.golden_root = args.value();
    } else if (a == "--results") {
      g.run.results_root = args.value();
      b.results_root = g.run.results_root;
    } else if (a == "--repetitions") {
      g.run.timed.repetitions = args.whole(0, 100000);
    } else if (a == "--warmup") {
      g.run.timed.warmup = args.whole(0, 100000);
      b.warmup = g.run.timed.warmup;
    } else if (a == "--launches") {
      g.run.launches = args.whole(1, 1000);
    } else if (a == "--reference") {
      g.run.golden_root = args.value();
      g.unresolved_exit = true;
    } else if (a == "--root") {
      root = args.value();
    } else if (a == "--quiet") {
      g.run.quiet = true;
      b.quiet = true;
    } else if (a == "--rehash") {
      g.run.rehash = true;
      b.rehash = true;
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
    } else {
      cases.push_back(a);
    }
  }
  if (cases.empty()) {
    std::cerr << "flashproof gate: name at least one case file, e.g. cases/*.json\n" << kGateUsageText;
    return 64;
  }
  auto suite = command_suite(root, cases);
  if (!suite) {
    std::cerr << "flashproof gate: " << suite.error().message << "\n";
    return 2;
  }
  g.run.suite = b.suite = *suite;
  // --golden (or --reference) is the golden root of both gates: the side-by-side gate reads the
  // baseline's golden there (its recorded spread sizes host-clock figures on CUDA; a vanished model).
  if (!g.run.golden_root.empty()) b.suite.golden = g.run.golden_root;
  install_child_cleanup_handlers();
  if (side_by_side) {
    const int code = run_build_gate(cases, b, std::cout).exit_code;
    if (!interrupted()) return code;
    std::fprintf(stderr, "flashproof gate: %s; gate.json says so\n", interrupted_text().c_str());
    return 128 + interrupt_signal();
  }
  if (!b.candidate_runtime.empty())
    args.usage_error("--candidate-runtime needs --baseline-runtime (the side-by-side gate)");
  if (!b.runtime_cpus.empty()) args.usage_error("--runtime-cpus needs --baseline-runtime (the side-by-side gate)");
  if (b.one_at_a_time) args.usage_error("--one-at-a-time needs --baseline-runtime (the side-by-side gate)");
  if (b.decode_probes >= 0) args.usage_error("--decode-probes needs --baseline-runtime (the side-by-side gate)");
  GateReport report = run_upgrade_gate(cases, g, std::cout);
  return report.exit_code;
}

}  // namespace fp
