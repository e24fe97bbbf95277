// The data of an A/B run (the flag off = arm A, on = arm B, everything else identical): what the
// A/B engine (flow/ab/) fills and its writers (report/ab_report.h: ab.txt, ab.json) put in words.
// Data only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "evidence/verdict_types.h"
#include "measure/ab_stats.h"
#include "measure/kv_headroom.h"
#include "measure/server_gauges.h"
#include "result/run_result.h"

namespace fp {

// What one arm established: its evidence, its launches, its samples.
struct AbArm {
  std::string name;                         // "on" or "off"
  std::string flag_value;                   // the value {flag} was replaced by
  Activity verdict = Activity::NoEvidence;  // the evidence pass's verdict
  std::string verdict_backend;
  std::vector<std::string> levels_used;
  std::string verdict_explanation;
  std::vector<std::string> verdict_quotes;
  bool verdict_as_required = false;            // on: active; off: not active
  std::optional<Degradation> degraded;         // the on arm ran the fused path on converted data
  std::string evidence_signals;                // e.g. "flash attention enabled; graph splits 1"
  std::vector<std::string> signal_mismatches;  // a timed launch that differs from the evidence pass
  std::string probed_check = "not run";        // flow/passes/probed_check.h
  std::vector<std::string> probed_mismatches;  // the probed timed configuration vs the evidence pass
  std::vector<std::string> evidence_argv, timed_argv;
  std::map<std::string, std::string> evidence_env;
  int launches = 0;                   // timed launches completed
  std::vector<FigureResult> figures;  // pooled over the arm's launches, in ab_figure order
  std::string gpu_memory = "not measured";
  std::map<std::string, double> kv_mib_by_device, compute_mib_by_device;  // last launch
  std::optional<Headroom> headroom;                                       // last launch (measure/kv_headroom.h)
  std::string headroom_why_not = "no timed launch was measured";
  // Sustained phase
  bool sustained_ran = false;
  std::optional<ServerGauges> sustained_gauges;  // the runtime's own metrics over the sustained phase
  double sustained_wall_s = 0;
  size_t sustained_requests = 0;
  int sustained_concurrency = 0;
  std::vector<std::string> drift_lines;  // "tpot_ms: last 5 vs first 5 requests: +1.2% (within noise)"
  // The server stopped answering in the sustained phase (flow/ab/sustained_phase.h): the line
  // ("1 of 23 sustained requests sent no byte for 60 s (stalled), ..."), the runtime's last log lines
  // at that moment, and the phase's sent count. A finding about this arm, not an incomplete A/B.
  std::string sustained_stop;
  std::vector<std::string> sustained_stop_log;
  size_t sustained_sent = 0;
  std::map<std::string, std::string> answers;  // prompt id -> first answer
  std::vector<std::string> unstable_answers;   // prompt ids answered differently across repetitions
  // The answers pass (flow/passes/answers_pass.h), run only when answers differ between the arms:
  // which prompts, its log, its failures.
  std::string answers_pass = "not run: no answer differs between the arms";
  std::vector<std::string> errors;
};

// Which way a figure moved with the flag on; words only in the writers (to_string).
enum class AbEffect { within_noise, better_with_flag_on, worse_with_flag_on };

// A stated mechanism against the measurement (flow/ab/mechanism.h).
enum class MechanismVerdict { confirmed, not_shown, smaller_than_stated, contradicted, not_measured };

// One of the job's gates of an A/B run.
enum class AbGateOutcome { pass, fail, undecided };

// One figure compared: B (on) against A (off).
struct AbFigure {
  std::string name;
  bool gate = false;
  bool lower_is_better = true;
  bool headline = false;  // a gate, a stated mechanism, or a difference nobody predicted
  AbResult cmp;
  AbEffect effect = AbEffect::within_noise;
};

struct MechanismCheck {
  std::string figure;
  MechanismExpect expect = MechanismExpect::unchanged;
  double at_least = 0, tolerance = 0;
  MechanismVerdict outcome = MechanismVerdict::not_measured;
  std::string detail;  // the measurement behind it, in words
};

// What made two arms' answers to one prompt differ (flow/ab/answer_classification.h), from the
// answers pass's token log-probabilities: a near-tie the arms' measured numerical disagreement
// explains, a margin beyond it, or not classified (and why).
enum class AnswerDifferenceKind { expected_near_tie, not_expected, unclassified };
enum class UnclassifiedWhy {
  none,
  not_asked,         // the runtime data names no way to ask for token probabilities
  pass_failed,       // the answers pass failed in an arm (detail)
  no_probabilities,  // the runtime returned no token probabilities
  not_reproduced,    // the answers pass answered otherwise than the timed launches (detail: which arm)
  first_token,       // the answers differ at their first token: no agreeing position to measure on
  one_arm_ended,     // one arm's answer is the other's beginning: it ended there
  token_not_listed   // the other arm's token is not among this arm's candidates, whose last is within the bound
};

struct AnswerDifference {
  AnswerDifferenceKind kind = AnswerDifferenceKind::unclassified;
  UnclassifiedWhy why = UnclassifiedWhy::none;
  std::string detail;               // an error or the arm it concerns, for the words
  size_t first_token = 0;           // 1-based position of the first token the arms chose differently; 0: not known
  std::string off_token, on_token;  // the tokens each arm chose there
  // The margin: how far below its own choice an arm put the other arm's token (nats), the larger of
  // the two arms' margins, and the arm it is from; a lower bound when margin_at_least (the token is
  // not among that arm's candidates).
  double margin_nats = 0;
  std::string margin_arm;
  bool margin_at_least = false;
  // The bound: factor x the arms' disagreement, the largest change in log-probability of the same
  // token between the arms over the agreeing_tokens positions before the first difference.
  double disagreement_nats = 0;
  size_t agreeing_tokens = 0;
  double factor = 0;
  double bound_nats = 0;
};

struct AbAnswerDiff {
  std::string prompt_id;
  bool identical = false;
  std::string diff;  // unified diff, off -> on
  AnswerDifference difference;  // when not identical
};

struct AbGate {
  std::string figure;  // or "answers"
  AbGateOutcome outcome = AbGateOutcome::undecided;
  std::string detail;
};

struct AbRun {
  std::string case_name, case_file, job, description, runtime, runtime_version, runtime_build;
  std::string fingerprint_id, model_path, model_sha256, flashproof_version, started_utc, output_dir;
  int repetitions = 0, rounds = 0, warmup = 0, concurrency = 0;
  double sustained_s = 0;
  std::vector<std::string> order;  // the arms in the order they ran: off, on, on, off ... (pairs AB BA or BA AB)
  // How the blocks' launches met: "launches interleaved from block 2: ..." or "launches one at a
  // time: why" (flow/paired/paired_runner.h; the memory figures left out, so that the file diffs cleanly).
  std::vector<std::string> launches;
  AbArm off, on;  // A and B
  std::vector<AbFigure> figures;
  std::vector<MechanismCheck> mechanism;
  std::vector<std::string> unpredicted;  // figures that differ with no statement about them
  std::vector<AbAnswerDiff> answers;
  std::string same_system;    // the answers' verdict, in words
  std::vector<AbGate> gates;  // the job's figures, paired per block (flow/paired/paired_runner.h)
  int blocks = 0;             // blocks of the side-by-side engine (one launch per arm each)
  std::string stopped;        // why the blocks stopped
  std::vector<std::string> failures;
  // What one arm's load showed that is not a figure: "flag off: 6 of 23 sustained requests sent no
  // byte for 60 s ...". Counted and quoted; the decision comes from what was measured.
  std::vector<std::string> findings;
  bool complete = false;
  int exit_code = 2;     // 0 pass, 1 fail, 2 incomplete, 3 a gate unresolved within the budget
  std::string decision;  // one line
};

}  // namespace fp
