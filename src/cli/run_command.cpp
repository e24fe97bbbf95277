// flashproof run CASE.json...: runs each case and prints a short table.
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "flow/case_run/case_runner.h"
#include "golden/threshold_policy.h"
#include "report/ctest_measurements.h"
#include "runtime/process.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kRunUsageText =
    "usage: flashproof run CASE.json... [options]\n"
    "Runs each case: an evidence pass (is fused attention really active?), the timed runs, the\n"
    "comparison with this machine's goldens and reference answers; writes result.txt and result.json.\n\n"
    "options:\n"
    "  --out DIR            this run's folder (one case only; new or empty: refused when it holds an earlier\n"
    "                       run or another run holds it); default results/<fingerprint>/<case>/<stamp>\n"
    "  --results DIR        root of the results history (default: the suite's results/)\n"
    "  --golden DIR         root of the goldens (default: the suite's golden/)\n"
    "  --launches N         fresh launches of the timed runs, each a cold start of the runtime (default 1;\n"
    "                       5 when --record-missing records a golden). Goldens hold the median and spread\n"
    "                       of the launch medians; a golden needs at least 3: `run --launches 5`, then\n"
    "                       `flashproof accept RUNDIR` keeps that run as this machine's golden\n"
    "  --record-missing     record what this machine's golden lacks, from a passing run only: the timing\n"
    "                       figures (from --launches launches, default 5), reference answers, the verdict\n"
    "  --record-missing-answers\n"
    "                       record only missing reference answers and the verdict (one launch is enough);\n"
    "                       timing figures are not compared\n"
    "  --timing-golden DIR  compare timing figures with the reviewed goldens under DIR (e.g. the committed\n"
    "                       golden/) instead of --golden's; where DIR has none for this fingerprint they are\n"
    "                       reported \"not compared\", not failed. Answers and the verdict stay with --golden\n"
    "                       (CTest's case tests: answers from a setup run, timing only against reviewed goldens)\n"
    "  --repetitions N      override the case's plan.repetitions\n"
    "  --warmup N           override the case's plan.warmup\n"
    "  --flag on|off        launch with the flag's on or off value instead of the case's flag.use\n"
    "  --cpu-share X        calibration: the timed launches under a CPU quota of X (0 < X < 1) of this\n"
    "                       machine's CPUs (cgroup-v1 cpu controller): a real, exactly sized slowdown\n"
    "  --rehash             read the model files again for their sha256 instead of taking it from the hash\n"
    "                       cache (~/.cache/flashproof/sha256.json; README \"Model files\")\n"
    "  --quiet              no progress lines (progress: a status line on a terminal, plain lines in CI\n"
    "                       or when stderr is not a terminal; FLASHPROOF_PROGRESS=terminal|lines|quiet)\n"
    FP_ROOT_OPTION_USAGE
    "  --ctest              print key figures as <CTestMeasurement> tags and the failure as <CTestDetails>\n"
    "                       (also with FLASHPROOF_CTEST=1, which the registered CTest cases set)\n"
    "A gated figure fails only when it is worse than the case's plan.min_effect (default 5%) and beyond the\n"
    "launch-to-launch noise band (3 sigma of the golden's launch medians); see README \"Results and goldens\".\n"
    "exit: 0 pass, 1 fail (verdict, regression, changed answer), 2 incomplete or bad input, 125 skipped\n";

// The figure `name`, or for a case with concurrency levels its first level's ("c1.ttft_ms").
const FigureResult* run_figure(const RunResult& r, const std::string& name) {
  for (const auto& f : r.figures)
    if (f.name == name) return &f;
  for (const auto& f : r.figures)
    if (f.name.size() > name.size() + 1 && f.name[0] == 'c' && f.name.compare(f.name.size() - name.size() - 1, std::string::npos, "." + name) == 0)
      return &f;
  return nullptr;
}

// "active (CPU 30) [log+placement]": the summary table's verdict column.
std::string verdict_column(const RunResult& r) {
  return verdict_text(r.verdict) + (r.verdict.levels_used.empty() ? "" : " [" + join(r.verdict.levels_used, "+") + "]");
}

void print_row(const CaseRun& run, const std::string& case_path, int verdict_width) {
  const RunResult& r = run.result;
  if (r.case_name.empty()) {
    std::printf("%-28s %s\n", case_path.c_str(), run.message.c_str());
    return;
  }
  const FigureResult* ttft = run_figure(r, "ttft_ms");
  const FigureResult* tps = run_figure(r, "decode_tokens_per_s");
  size_t same = 0, none = 0;
  for (const auto& a : r.answers) {
    same += a.reference == "identical" || a.reference == "recorded";
    none += a.reference == "no reference";
  }
  const bool recorded = !r.answers.empty() && r.answers.front().reference == "recorded";
  // A failed case records no reference answers: "no reference", never "0/3 match".
  std::string answers = !r.answers.empty() && none == r.answers.size()
                            ? "no reference"
                            : std::to_string(same) + "/" + std::to_string(r.answers.size()) + " " + (recorded ? "recorded" : "match");
  const std::string verdict = verdict_column(r);
  std::printf("%-28s %-10s %-*s %8s %8s %8s  %s\n", r.case_name.c_str(), r.status().c_str(), verdict_width, verdict.c_str(),
              ttft ? fixed(ttft->summary.median, 1).c_str() : "-", ttft ? fixed(ttft->summary.p95, 1).c_str() : "-",
              tps ? fixed(tps->summary.median, 1).c_str() : "-", answers.c_str());
}

// Key figures as CTest measurements (Test.xml, CDash) and the failure's explanation as CTest's
// details (report/ctest_measurements.h). Names carry the case only when one test runs several.
void print_for_ctest(const std::vector<CaseRun>& runs) {
  std::vector<std::string> details;
  for (const auto& run : runs) {
    const RunResult& r = run.result;
    if (r.case_name.empty()) {
      if (!run.message.empty()) details.push_back(run.message);
      continue;
    }
    for (const auto& m : run_measurements(r, runs.size() > 1 ? r.case_name + "/" : "")) std::printf("%s\n", m.c_str());
    if (std::string s = failure_summary(r); !s.empty()) details.push_back((runs.size() > 1 ? r.case_name + ": " : "") + s);
  }
  if (!details.empty()) std::printf("%s\n", ctest_details(join(details, "; ")).c_str());
}

}  // namespace

int run_command(int argc, char** argv) {
  RunOptions o;
  std::vector<std::string> cases;
  std::string root;
  const char* ctest_env = std::getenv("FLASHPROOF_CTEST");
  bool ctest = ctest_env && std::string(ctest_env) == "1";
  Args args("run", argc, argv, kRunUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kRunUsageText;
      return 0;
    } else if (a == "--root") {
      root = args.value();
    } else if (a == "--out") {
      o.out_dir = args.value();
    } else if (a == "--results") {
      o.results_root = args.value();
    } else if (a == "--golden") {
      o.golden_root = args.value();
    } else if (a == "--record-missing") {
      o.record_missing = true;
    } else if (a == "--record-missing-answers") {
      o.record_missing_answers = true;
    } else if (a == "--timing-golden") {
      o.timing_golden_root = args.value();
    } else if (a == "--launches") {
      o.launches = args.whole(1, 1000);
    } else if (a == "--cpu-share") {
      o.cpu_share = args.number(0.01, 0.999, "a fraction of the machine's CPU time, e.g. 0.95");
    } else if (a == "--repetitions") {
      o.timed.repetitions = args.whole(0, 100000);
    } else if (a == "--warmup") {
      o.timed.warmup = args.whole(0, 100000);
    } else if (a == "--flag") {
      const std::string v = args.value();
      if (v != "on" && v != "off") args.usage_error("--flag " + quote(v) + ": expected on or off");
      o.flag_on = v == "on";
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--rehash") {
      o.rehash = true;
    } else if (a == "--ctest") {
      ctest = true;
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
    } else {
      cases.push_back(a);
    }
  }
  if (cases.empty()) {
    std::cerr << "flashproof run: name at least one case file, e.g. cases/chat-tiny-short.json\n" << kRunUsageText;
    return kRunUsage;
  }
  if (o.record_missing && o.launches > 0 && o.launches < static_cast<int>(kMinGoldenLaunches)) {
    std::cerr << "flashproof run: --record-missing --launches " << o.launches << ": a golden needs at least "
              << kMinGoldenLaunches << " launches (their spread is its noise band); give --launches "
              << kDefaultGoldenLaunches << " or leave it out\n";
    return kRunUsage;
  }
  if (o.record_missing && !o.timing_golden_root.empty()) {
    std::cerr << "flashproof run: --record-missing records into --golden; --timing-golden names reviewed goldens,"
                 " never recorded into: give one or the other (--record-missing-answers goes with --timing-golden)\n";
    return kRunUsage;
  }
  if (!o.out_dir.empty() && cases.size() > 1) {
    std::cerr << "flashproof run: --out names one run's folder; give one case, or use --results\n";
    return kRunUsage;
  }
  auto suite = command_suite(root, cases);
  if (!suite) {
    std::cerr << "flashproof run: " << suite.error().message << "\n";
    return kRunIncomplete;
  }
  o.suite = *suite;
  install_child_cleanup_handlers();
  std::vector<CaseRun> runs;
  int worst = kRunPass;
  bool any_ran = false;
  // The table's header first and each case's row as soon as it is done: the first verdict shows
  // while the other cases still run.
  const int verdict_width = 34;
  std::printf("%-28s %-10s %-*s %8s %8s %8s  %s\n", "case", "status", verdict_width, "verdict [evidence]", "TTFT p50", "p95",
              "tok/s", "answers");
  std::fflush(stdout);
  for (const auto& path : cases) {
    CaseRun run = run_case_file(path, o);
    if (!run.message.empty()) std::cerr << "flashproof run: " << run.message << "\n";
    for (const auto& f : failure_explanation(run.result)) std::cerr << "FAIL " << run.result.case_name << ": " << f << "\n";
    for (const auto& l : run.result.golden_lines)
      if (starts_with(l, "figures not compared") || starts_with(l, "BUSY RECORDING") ||
          (l.find(" [gate] ") != std::string::npos && l.find("cannot resolve") != std::string::npos))
        std::cerr << "note " << run.result.case_name << ": " << l << "\n";
    if (!run.result_file.empty()) std::cerr << "result: " << run.result_file << "\n";
    if (run.exit_code != kRunSkip) {
      any_ran = true;
      worst = std::max(worst == kRunSkip ? 0 : worst, run.exit_code == kRunIncomplete ? 2 : run.exit_code);
    }
    std::fflush(stderr);
    print_row(run, path, verdict_width);
    std::fflush(stdout);
    runs.push_back(std::move(run));
    if (interrupted()) break;
  }
  if (ctest) print_for_ctest(runs);
  std::fflush(stdout);
  if (interrupted()) {
    std::fprintf(stderr, "flashproof run: interrupted by signal %d; partial results are marked incomplete\n", interrupt_signal());
    return 128 + interrupt_signal();
  }
  return any_ran ? worst : kRunSkip;
}

}  // namespace fp
