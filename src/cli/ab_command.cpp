// flashproof ab CASE.json: the case with the flag on and with it off, interleaved, compared.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "flow/ab/ab_runner.h"
#include "runtime/process.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kAbUsageText =
    "usage: flashproof ab CASE.json [options]\n"
    "Runs the case with the flag on and with it off, everything else identical: one evidence pass per\n"
    "arm (on must show fused attention active, off not), then the side-by-side engine of `gate`: blocks\n"
    "of one fresh launch per arm, in pairs AB BA or BA AB at random (cold start, warm-up, measured\n"
    "rounds), the job's gated figures compared paired per block and prompt (regression / no regression\n"
    "/ unresolved against the case's plan.min_effect, blocks added while unresolved up to\n"
    "plan.budget_s), then a sustained phase per arm. Reports every figure pooled per arm too (95% bootstrap interval, Mann-Whitney U), checks\n"
    "the case's stated mechanism (\"ab\": {\"mechanism\": [...]}), compares the answers prompt by prompt,\n"
    "and lets the job decide. Writes ab.txt, ab.json and every launch's log.\n\n"
    "options (defaults from the case's \"ab\" block):\n"
    "  --repetitions N      exactly N blocks (one fresh launch per arm each; rounded up to even). Default:\n"
    "                       ab.repetitions (else 5) blocks, then more while a gate is unresolved, up to\n"
    "                       plan.max_blocks and plan.budget_s\n"
    "  --rounds N           measured rounds over the prompts per launch (default ab.rounds, else plan.repetitions)\n"
    "  --warmup N           warm-up rounds per launch (default ab.warmup, else plan.warmup)\n"
    "  --sustained-s X      sustained phase per arm in seconds, 0 to skip (default ab.sustained.duration_s, else 10)\n"
    "  --concurrency N      concurrent streams in the sustained phase (default ab.sustained.concurrency, else 2)\n"
    "  --out DIR            the A/B folder (new or empty, as run's); default results/<fingerprint>/<case>/ab-<stamp>\n"
    "  --results DIR        root of the results history (default: the suite's results/)\n"
    "  --rehash             read the model files again for their sha256 (not from the hash cache)\n"
    FP_ROOT_OPTION_USAGE
    "  --quiet              no progress lines\n"
    "exit: 0 the job's gates are not worse with the flag on and the answers satisfy the job,\n"
    "      1 otherwise (or the evidence shows the arms did not differ as asked),\n"
    "      2 incomplete (a launch failed), 3 a gate unresolved within the budget, 64 usage, 125 skipped,\n"
    "      128+N interrupted by signal N (130: SIGINT; no runtime is started after it)\n";

}  // namespace

int ab_command(int argc, char** argv) {
  AbRunOptions o;
  OneCaseArgs one;
  Args args("ab", argc, argv, kAbUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kAbUsageText;
      return 0;
    } else if (a == "--repetitions") {
      o.repetitions = args.whole(1, 1000);
    } else if (a == "--rounds") {
      o.rounds = args.whole(1, 100000);
    } else if (a == "--warmup") {
      o.warmup = args.whole(0, 1000);
    } else if (a == "--sustained-s") {
      o.sustained_s = args.number(0, 86400);
    } else if (a == "--concurrency") {
      o.concurrency = args.whole(1, 1024);
    } else if (a == "--out") {
      o.out_dir = args.value();
    } else if (a == "--results") {
      o.results_root = args.value();
    } else if (a == "--rehash") {
      o.rehash = true;
    } else {
      take_one_case_arg(args, one);
    }
  }
  int code = 0;
  auto suite = one_case_suite("ab", one, kAbUsageText, kAbUsage, kAbIncomplete, &code);
  if (!suite) return code;
  const std::string& case_path = one.case_path;
  o.quiet = one.quiet;
  o.suite = *suite;
  install_child_cleanup_handlers();
  AbOutcome out = run_ab(case_path, o);
  if (!out.message.empty()) {
    std::cerr << "flashproof ab: " << out.message << "\n";
    return out.exit_code;
  }
  std::cout << ab_to_text(out.run);
  std::cout << "\nab report: " << out.run.output_dir << "/ab.txt\n";
  std::fflush(stdout);
  if (interrupted()) {  // as `run` does: the report is incomplete, the exit says why
    std::fprintf(stderr, "flashproof ab: %s; the report is incomplete\n", interrupted_text().c_str());
    return 128 + interrupt_signal();
  }
  return out.exit_code;
}

}  // namespace fp
