// The side-by-side upgrade gate: the old build (baseline) and the new one (candidate) of a runtime,
// run alternately on this machine, case by case, and compared paired (flow/paired/paired_runner.h).
//
// Per case:
//  1. both runtimes asked for their version: what changed, field by field;
//  2. one evidence pass per arm: fused attention must be what the case expects in the candidate,
//     and the same (state and devices) as in the baseline, or the kernel was lost;
//  3. the timed blocks (pairs AB BA or BA AB at random) until every gated figure is decided or the budget is spent;
//  4. the answers of the two arms, prompt by prompt: exact;
//  5. the outcome: regression (a gated figure, a lost kernel or a changed answer), no regression,
//     unresolved (more blocks were needed than the budget allowed), or incomplete.
// Stronger than the gate against stored goldens (flow/gates/upgrade_gate.h): both builds see the same
// machine at the same time, so drift, thermal state and background load fall on both arms, and the
// comparison is paired launch by launch instead of against numbers recorded on another day.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "case/suite.h"
#include "util/min_effect.h"

namespace fp {

struct BuildGateOptions {
  Suite suite;                     // where the cases live (case/suite.h)
  std::string results_root;        // default suite.results
  std::string baseline_runtime;    // executable or prefix folder (runtime/launcher.h runtime_from_path)
  std::string candidate_runtime;   // empty: the runtime the cases resolve now
  double baseline_cpu_share = 1;   // < 1: that arm runs under a CPU quota (calibration, runtime/cpu_quota.h)
  double candidate_cpu_share = 1;
  // Calibration on a GPU box, where a CPU quota does not slow the runtime: the candidate's long
  // prompt (shape.long_prompt) made this many times longer: more real prompt tokens to process. The
  // two builds then answer different prompts, so the answers are not compared.
  double candidate_prompt_scale = 1;
  int blocks = -1;                 // overrides of the cases' plan
  int max_blocks = -1;
  double budget_s = -1;
  int rounds = -1;
  int warmup = -1;
  // --min-effect: figure -> relative part and floor (NaN: keep the case's or the default floor),
  // over the cases' own
  std::map<std::string, MinEffect> min_effect;
  bool quiet = false;
  bool rehash = false;             // read the model files again instead of trusting the hash cache
  std::vector<int> runtime_cpus;   // --runtime-cpus (PairedPlan::runtime_cpus); empty: automatic
  bool one_at_a_time = false;      // --one-at-a-time: never interleave the launches (PairedPlan::interleave)
  int decode_probes = -1;          // --decode-probes (PairedPlan::decode_probes); < 0: the default (plan_for)
};

// Exit codes of `flashproof gate --baseline-runtime`.
enum BuildGateExit {
  kGateNoRegression = 0,
  kGateRegression = 1,   // a gated figure regressed, fused attention was lost, or an answer changed
  kGateIncomplete = 2,   // a launch or request failed, bad input
  kGateUnresolved = 3,   // some gated figure undecided within the budget
  kGateUsage = 64,
  kGateSkipped = 125,    // every case skipped (no runtime or model here)
};

// What one case of the gate came to. Words only where the gate writes (to_string: gate.txt, gate.json).
enum class GateOutcome { no_regression, regression, unresolved, incomplete, skipped };
const char* to_string(GateOutcome o);

// What went wrong in a case, by kind: the kind decides the case's outcome (is_regression), the text
// says it to the operator and is never read back.
enum class GateProblemKind {
  kernel_lost,         // the candidate's fused attention is not what the case expects
  evidence_lost,       // an evidence level that answered for the baseline is silent for the candidate
  kernel_set_changed,  // an attention kernel family swapped, lost, new or its share moved
  verdict_changed,     // the verdict differs between the builds
  fused_moved,         // the same verdict on other devices
  memory,              // a memory figure beyond its tolerance, or the KV cache moved
  answers_changed,     // the candidate answers differently
  regression,          // a gated figure or a guard regressed
  launch_failed,       // a launch or request failed, or the gate was interrupted
  signals_differ,      // a timed launch's cheap signals differ from its evidence pass
  answer_unstable,     // one build answered differently between its own launches
  unresolved,          // a gated figure undecided within the budget
  not_written,         // gate.json could not be written
  setup,               // the case could not be resolved, fingerprinted, claimed or run through its evidence pass
};
// A problem of this kind makes the case a regression (the others make it incomplete).
bool is_regression(GateProblemKind k);

struct GateProblem {
  GateProblemKind kind;
  std::string text;
};

struct BuildGateCase {
  std::string case_path, case_name;
  GateOutcome outcome = GateOutcome::incomplete;
  std::vector<GateProblem> problems;
  std::string result_dir;
};

struct BuildGateReport {
  std::vector<BuildGateCase> cases;
  std::string text;
  int exit_code = kGateIncomplete;
};

BuildGateReport run_build_gate(const std::vector<std::string>& case_paths, const BuildGateOptions& options, std::ostream& out);

}  // namespace fp
