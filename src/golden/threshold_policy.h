// The threshold policy: the one place that says which way a timing figure is better, whether it
// gates, and when its change against a golden counts. The golden comparison (golden/compare.h), the
// recording of a golden (flow/case_run/golden_record.h), the run-to-run diff (report/result_diff.h) and the HTML
// report's limit line call it; nothing else computes a threshold.
//
// The unit is the LAUNCH: each launch is a cold start of the runtime, and its median is one value. A
// golden holds per figure the median of N launch medians, their spread (raw MAD) and n = N; a run
// brings its own launch medians (one per launch, usually one). With d the difference of the medians
// signed so that d > 0 is worse (lower_is_better: d = run - golden; higher_is_better: golden - run):
//   sigma  = 1.4826 * MAD of the golden's launch medians: the launch-to-launch standard deviation
//            (the larger of the golden's and the run's when the run has >= 3 launches too)
//   noise  = k * sigma * sqrt(1/n_golden + 1/n_run), k = 3; unknown (infinite) when the golden holds
//            fewer than 3 launches; across sittings widened by what one sitting cannot see, or
//            from the nights (NoiseModel below, golden/noise_band.h)
//   effect = max(relative * |golden median|, floor): the case's smallest worsening worth failing
//            (util/min_effect.h; case/case_file.h min_effect: 5% with the figure's floor in its
//            unit unless the case names the figure, case/effect_defaults.h)
//   regressed     d > effect and d > noise         (fails the run when the figure gates)
//   improved     -d > effect and -d > noise
//   within_noise |d| > effect but |d| <= noise    (unresolved: never a failure)
//   pass         |d| <= effect
// When noise > effect the golden cannot resolve a change of min_effect, and the comparison says so
// plainly: record more launches, or use the side-by-side gate.
//
// Guards: a figure the job does not gate but a user feels (case/effect_defaults.h) is judged by the
// same rule at its guard effect (25% by default) and fails when regressed; its line says "guard".
// Memory figures (named "memory.*") follow their own rule: golden/memory_policy.h.
//
// Attention kernel families (golden/kernel_families.h) are judged by the same noise rule, on their
// share of the attention GPU time in each probed launch (the evidence pass and each probed check),
// in absolute points: effect = kMinShareEffect; a family the golden had and the run lacks is lost,
// one the golden lacked is new (neither needs a noise band: a kernel that never ran is no jitter).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "golden/golden_file.h"
#include "measure/stats.h"
#include "util/min_effect.h"

namespace fp {

// Standard deviations of the launch-to-launch noise counted as noise.
inline constexpr double kNoiseK = 3.0;
// Fewer launch medians than this give no usable spread: a golden needs at least this many launches.
inline constexpr size_t kMinGoldenLaunches = 3;
// The launches `run --record-missing` records a golden from unless told otherwise.
inline constexpr int kDefaultGoldenLaunches = 5;

enum class FigureStatus { pass, regressed, improved, within_noise, new_figure, missing };
const char* to_string(FigureStatus s);

// What the job and the case say about one figure: which way is better, whether the job fails on it
// (flow/passes/figures.h), and the smallest worsening worth failing (from the case). A guard is a figure the
// job does not gate that still fails on a regression beyond `min_effect`, which is then its guard
// effect (case/case_file.h guard_effect).
struct FigurePolicy {
  Direction direction = Direction::lower_is_better;
  bool gate = false;
  MinEffect min_effect{kNoValue, 0};  // relative part a fraction of the golden median, > 0; floor in the figure's unit
  bool guard = false;                 // never together with gate
};

// The policy for `name` in `policies`: a key matches a figure named exactly like it or starting with
// key + "_" ("ttft_ms" matches "ttft_ms_p95"); the longest key wins. nullptr when none matches.
const FigurePolicy* find_policy(const std::string& name, const std::map<std::string, FigurePolicy>& policies);

// One side of a comparison: the median of its launch medians, their raw MAD, and how many; for a
// golden, where that spread came from (golden/golden_file.h BandSource).
struct LaunchSpread {
  double median = kNoValue;
  double spread = kNoValue;  // raw MAD of the launch medians; 0 for one launch
  size_t n = 0;              // launches (or rounds, or nights: `source`)
  BandSource source = BandSource::launches;
};
// From launch medians (must be finite); n == 0 and NaNs when empty.
LaunchSpread launch_spread(const std::vector<double>& launch_medians);

// The judgement of one figure's change, with every number it rests on.
struct ChangeJudgement {
  FigureStatus status = FigureStatus::pass;  // pass | regressed | improved | within_noise
  double worse_by = kNoValue;      // d above (negative: better), figure's unit
  double worse_by_rel = kNoValue;  // d / |golden median|; NaN when the golden median is 0
  double effect = kNoValue;        // max(relative * |golden median|, floor), figure's unit
  bool floor_in_force = false;     // the floor decided the effect
  double sigma = kNoValue;         // launch-to-launch standard deviation; +inf when unknown
  double sigma_rel = kNoValue;     // sigma / |golden median|
  double noise = kNoValue;         // noise band, figure's unit; +inf when unknown
  double noise_rel = kNoValue;     // noise / |golden median|
  bool resolves = false;           // noise <= effect: a change of min_effect would be seen
  bool guard = false;              // judged as a guard (policy.guard)
  std::string band;                // where the noise band came from, in words ("launches: 5 launches of the golden")
  std::string facts;               // the numbers in words (for the comparison line)
  std::string resolution;          // "" when it resolves, else "this golden cannot resolve a 5% change: ..."
};
// What a comparison across sittings adds to the golden's own spread (golden/noise_band.h): the
// figure's sitting-to-sitting deviation, and the earlier nights of this case on this machine.
// The default (none) compares as if both sides shared one sitting: a run against the run before it
// (`flashproof diff`), and the tests of the launch rule itself.
struct NoiseModel {
  double sitting_sigma_rel = 0;  // fraction of the golden median; 0: no widening
  std::vector<double> nights;    // earlier nights' values (same fingerprint, as many launches), oldest first
  const char* sitting_source = nullptr;  // where sitting_sigma_rel comes from; null: noise_band.h's default words
  double sitting_prior_df = 0;  // degrees of freedom the sitting spread is worth beside the nights (noise_band.h)
};
// The judgement; with a model, the band is widened for the sitting (golden sources "launches" and
// "rounds") or comes from the nights (golden/noise_band.h), and `band` says which.
ChangeJudgement judge_change(const FigurePolicy& policy, const LaunchSpread& golden, const LaunchSpread& run,
                             const NoiseModel& model = {});

// The value a run of `run_launches` launches must pass (above for lower_is_better, below for
// higher_is_better) for the figure to count as regressed; NaN when the noise is unknown.
double regression_limit(const FigurePolicy& policy, const LaunchSpread& golden, size_t run_launches,
                        const NoiseModel& model = {});

// The smallest move of a kernel family's share worth failing: 5 points of the attention GPU time.
inline constexpr double kMinShareEffect = 0.05;

enum class ShareStatus { same, moved, within_noise, lost, appeared };
const char* to_string(ShareStatus s);

struct ShareJudgement {
  ShareStatus status = ShareStatus::same;
  double change = kNoValue;  // run median - golden median, in share (0..1)
  double effect = kMinShareEffect;
  double noise = kNoValue;   // +inf when the golden has too few probed launches
  bool resolves = false;     // noise <= effect
};
// `golden` and `run`: the family's share in each probed launch (0 in a launch without it);
// in_golden / in_run: whether the family ran in any launch of that side.
ShareJudgement judge_share(const LaunchSpread& golden, const LaunchSpread& run, bool in_golden, bool in_run);

}  // namespace fp
