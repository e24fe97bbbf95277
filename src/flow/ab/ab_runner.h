// A/B mode: one case run with the flag on and with it off, everything else identical (same
// binary, model, prompts, seed, threads, context, port policy). One evidence pass per arm proves
// what each arm really ran (on: fused attention active; off: not active). Then the timed launches
// run on the side-by-side engine (flow/paired/paired_runner.h): blocks of one fresh launch per arm,
// in balanced pairs (AB BA or BA AB at random), so that drift of the machine falls on both; the job's gated figures are compared paired
// per block and prompt, with blocks added while a gate is unresolved (flow/ab/ab_decision.h decides).
// A sustained phase per arm follows. Every figure is also pooled per arm for the report
// (measure/ab_stats.h), the stated mechanism is checked, and the answers are compared prompt by prompt.
#pragma once

#include <string>
#include <vector>

#include "case/case_file.h"
#include "flow/passes/case_context.h"
#include "report/ab_report.h"

namespace fp {

struct AbRunOptions {
  Suite suite;                // where the case lives (case/suite.h)
  std::string results_root;   // default suite.results
  std::string out_dir;        // default results_root/<fingerprint>/<case>/ab-<stamp>
  int repetitions = -1;       // launches per arm; default the case's ab.repetitions
  int rounds = -1;            // rounds per launch; default ab.rounds
  int warmup = -1;            // warm-up rounds per launch; default ab.warmup, else plan.warmup
  double sustained_s = -1;    // default ab.sustained.duration_s; 0 skips the phase
  int concurrency = -1;       // default ab.sustained.concurrency
  bool quiet = false;
  bool rehash = false;        // read the model files again instead of trusting the hash cache
};

// Exit codes of `flashproof ab`: 0 the job's gates are not worse with the flag on and the answers
// satisfy the job; 1 otherwise (or the evidence shows the arms did not differ as asked); 2 incomplete
// (a launch or request failed); 3 a gate unresolved within the budget; 64 usage; 125 skipped.
enum AbExit { kAbPass = 0, kAbFail = 1, kAbIncomplete = 2, kAbUnresolved = 3, kAbUsage = 64, kAbSkip = 125 };

struct AbOutcome {
  AbRun run;
  int exit_code = kAbIncomplete;
  std::string message;  // an error before any result existed, or a skip reason
};

AbOutcome run_ab(const std::string& case_path, const AbRunOptions& options);

// The parts below are pure, for tests.

// Every figure present in both arms, compared B (on) against A (off), in the arms' figure order.
std::vector<AbFigure> compare_arms(const AbArm& off, const AbArm& on);

// The answers of both arms, prompt by prompt (prompt id order); a unified diff off -> on.
std::vector<AbAnswerDiff> compare_arm_answers(const AbArm& off, const AbArm& on);


}  // namespace fp
