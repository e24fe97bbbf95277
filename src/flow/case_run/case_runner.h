// One case, start to end: load and resolve, the evidence pass, the timed runs, the comparison with
// this machine's goldens and reference answers, and the result files. The flow runs one way:
// case -> launch -> evidence and measurements -> comparison -> report.
#pragma once

#include <optional>
#include <string>

#include "case/suite.h"
#include "flow/passes/timed_pass.h"
#include "result/run_result.h"

namespace fp {

struct RunOptions {
  Suite suite;                      // where the cases live: their relative paths, prompts, results, goldens (case/suite.h)
  std::string results_root;         // default suite.results
  std::string out_dir;              // this run's folder; default results_root/<fingerprint>/<case>/<stamp>
  std::string golden_root;          // default suite.golden
  std::string golden_fingerprint;   // compare with golden/<this id>/ instead of the run's own (upgrade gate)
  std::string timing_golden_root;   // compare timing figures with the reviewed goldens here instead
                                    // (none for the fingerprint: "not compared", not a failure)
  bool record_missing = false;      // record what this machine lacks: thresholds, answers, verdict
  bool record_missing_answers = false;  // record missing answers and the verdict only (figures not compared)
  int launches = 0;                 // fresh launches of the timed runs; 0: 1, or kDefaultGoldenLaunches
                                    // when record_missing will record thresholds
  std::optional<bool> flag_on;      // override the case's flag.use (A/B mode)
  double cpu_share = 1;             // < 1: the timed launches run under a CPU quota of this share of the
                                    // machine (calibration: an injected slowdown; runtime/cpu_quota.h)
  TimedOptions timed;
  bool quiet = false;               // no progress lines on stderr
  bool rehash = false;              // read the model files again instead of trusting the hash cache
};

// Exit codes of `flashproof run`, as CTest sees them.
enum RunExit { kRunPass = 0, kRunFail = 1, kRunIncomplete = 2, kRunUsage = 64, kRunSkip = 125 };

struct CaseRun {
  RunResult result;
  int exit_code = kRunIncomplete;
  std::string message;  // for an error before any result existed, or a skip reason
  std::string result_file;  // result.txt when the result files were written, else ""
};

CaseRun run_case_file(const std::string& case_path, const RunOptions& options);

}  // namespace fp
