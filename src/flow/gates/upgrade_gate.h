// The upgrade gate: after a new runtime build, a new driver or a new model file, run every case
// against the goldens of the previous fingerprint and fail on any lost kernel, regression beyond
// tolerance or changed answer.
//
// 1. Each case's fingerprint now (hardware, runtime --version, model sha256, launch template).
// 2. The baseline: the fingerprint folder named by the operator, else the newest other folder in
//    golden/ with the same hardware and runtime that has goldens for these cases (newest = latest
//    golden file modification); with none, this fingerprint's own goldens (a model-file change
//    keeps the id: the per-case fingerprint still shows what changed).
// 3. What changed, field by field: the baseline's recorded fingerprint against this one.
// 4. Every case runs (flow/case_runner) comparing with the baseline's goldens and answers.
// 5. Fails a case when: the run is incomplete; fused attention is not active where the case
//    expects it; the verdict or its devices differ from the one the golden was recorded with
//    (a lost kernel); an evidence level the golden's verdict had is silent now (EVIDENCE LOST);
//    the attention kernel set differs from the golden's: a family lost or new (KERNEL SWAP) or a
//    share moved beyond the golden's noise (golden/kernel_families.h); a gated figure regressed
//    beyond the case's minimum effect and the golden's launch-to-launch noise
//    (golden/threshold_policy.h); an answer changed. Accepting the new run (`flashproof accept`)
//    makes its verdict, levels and kernel set the golden's.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "flow/case_run/case_runner.h"
#include "golden/fingerprint.h"

namespace fp {

struct GateOptions {
  RunOptions run;        // roots, repetitions, warmup; golden_fingerprint and record_missing are set by the gate
  std::string baseline;  // fingerprint id named by the operator; empty: chosen as above
  // Before/after (ci/driver-bump.sh): a case whose gated figure got worse beyond its minimum effect
  // but stays within the noise band is "unresolved" (exit 3, as the side-by-side gate's) instead of a pass.
  bool unresolved_exit = false;
};

struct Baseline {
  std::string id;
  std::string reason;  // why this folder, in words
};

// Step 2 for cases `case_names` run with fingerprint `current`. Errors name the folder or file
// (an unreadable fingerprint.json of a candidate is an error, not a skipped folder).
Result<Baseline> choose_baseline(const std::string& golden_root, const Fingerprint& current,
                                 const std::vector<std::string>& case_names, const std::string& named);

// A case's outcome in the upgrade gate; only the gate's report puts it in words (to_string: pass,
// FAIL, unresolved, incomplete, skipped).
enum class UpgradeOutcome { pass, fail, unresolved, incomplete, skipped };
const char* to_string(UpgradeOutcome o);

// A gated figure the threshold rule itself found worse beyond its minimum effect but within the
// noise band (not one a BUSIER, SLOWER MACHINE or OTHER MACHINE note set aside): what
// GateOptions::unresolved_exit makes "unresolved".
bool worse_within_noise(const RunResult::GoldenFigure& f);

struct GateCaseReport {
  std::string case_path, case_name;
  UpgradeOutcome outcome = UpgradeOutcome::incomplete;
  std::string baseline_id, result_dir;
  std::vector<FieldChange> changes;    // recorded fingerprint of the baseline golden -> this run
  std::string verdict_before, verdict_after;
  std::vector<std::string> problems;   // why it fails
  std::vector<std::string> figure_lines;  // the comparison, one line per figure
};

struct GateReport {
  std::vector<GateCaseReport> cases;
  std::string text;      // everything printed
  int exit_code = 2;     // 0 pass, 1 fail, 2 incomplete or bad input, 3 unresolved (unresolved_exit), 125 every case skipped
};

// "the new build compiles other K/V pairs: now also ...; no longer ... (before: ...; now: ...)", then
// the cases of the suite (name, K/V pair as its launch states it) whose pair enters or leaves the list.
std::string compiled_pairs_change_text(const FaPairChange& change, const std::string& before, const std::string& after,
                                       const std::vector<std::pair<std::string, std::string>>& case_pairs);

// Runs the gate, printing as it goes to `out`.
GateReport run_upgrade_gate(const std::vector<std::string>& case_paths, const GateOptions& options, std::ostream& out);

}  // namespace fp
