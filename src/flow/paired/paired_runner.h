// The side-by-side engine: two arms of one case (the old and the new build for the gate, the flag
// off and on for A/B) on the same machine, so that both see the same machine state. Blocks in
// pairs, AB then BA or BA then AB at random (block_orders); every launch is a fresh start of the
// runtime (cold start, warm-up, then rounds over the same prompts in the same order). Interleaved
// (the default where both fit, PairedPlan::interleave): both launches of a block are up at once and
// serve their measured requests in turn, one at a time (flow/paired/alternation.h), so that a
// machine that speeds up or slows down within the block weighs on both arms alike; the first block
// runs them one after the other and measures whether both fit (flow/paired/room_for_both.h). Blocks
// are added and looked at by the gate's one sequential loop (flow/paired/sequential_loop.h): at each
// scheduled look every figure is decided (measure/paired_stats.h; docs/gate-design.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/kernel_tally.h"
#include "evidence/signals.h"
#include "flow/passes/case_context.h"
#include "flow/passes/gated_figures.h"
#include "flow/passes/low_noise_figures.h"
#include "flow/passes/memory_figures.h"
#include "flow/passes/timed_pass.h"
#include "measure/paired_stats.h"

namespace fp {

struct PairedArm {
  std::string name;                       // "baseline" / "candidate", or "off" / "on"
  CaseContext ctx;                        // the case, its runtime
  LaunchPlacement at;                     // flag value, cgroup; launches go below at.out_dir
  std::optional<CheapSignals> evidence;   // each launch's log must tie to this arm's evidence pass
};

// The gate's decode probes per measured request where itl_mean_ms gates (PairedPlan::decode_probes);
// the sixth of the gate's tuning constants (measure/paired_stats.h; why 4: bench/calibration.md).
inline constexpr int kDefaultDecodeProbes = 4;

struct PairedPlan {
  int warmup = 1;
  int rounds = 3;
  int first_blocks = 4;
  int max_blocks = RunPlan{}.max_blocks;
  // Time budget of the timed blocks; <= 0: budget_blocks blocks at the block time measured by the
  // first look (the default: cases whose blocks take 1 s and 34 s get the same chance to decide),
  // at least budget_floor_s.
  double budget_s = 0;
  int budget_blocks = kDefaultBudgetBlocks;
  double budget_floor_s = kDefaultBudgetFloorS;
  bool concurrent_rounds = false;              // batch: every prompt of a round in flight at once
  // Both launches of a block up at once, their requests in turn (from the second block, where the
  // first showed room for both); false: one launch after the other (gate --one-at-a-time).
  bool interleave = true;
  // Decode probes after each measured request (flow/passes/timed_pass.h TimedOptions::decode_probes):
  // itl_mean_ms then comes from them (launch_units). 0: none.
  int decode_probes = 0;
  std::vector<std::string> gated;              // figure names the job gates on
  // Per figure (gated or reported); default_min_effect otherwise. A floor becomes a relative effect
  // through the baseline arm's median of the figure's units at each look (MinEffect::relative_at).
  std::map<std::string, MinEffect> min_effect;
  // Guards: figures a user feels that the job does not gate, each at its guard effect, and the full
  // requests' decode where itl_mean_ms comes from decode probes (apply_decode_probes), decided with
  // the same sequential statistics as a family of their own (Holm across the guards); a guard's
  // regression is the case's regression; an unresolved guard holds the blocks and the outcome only
  // while its estimate is beyond its regression bound (flow/paired/sequential_loop.h).
  std::map<std::string, MinEffect> guards;
  // After each timed launch, launch the same arm once more with the kernel probe attached, serving the
  // job's load, and take gpu_kernel_ms_per_token and attention_kernel_ms_per_token from it (set when a
  // gated figure needs them: needs_kernel_probe). The timed launches never carry the probe.
  bool kernel_time = false;
  // The runtime's CPUs as the operator chose them (gate --runtime-cpus); the client gets the others
  // the harness may use. Empty: with at least 4 CPUs the client gets the last one and the runtime the
  // rest, with fewer neither is pinned.
  std::vector<int> runtime_cpus;
  bool quiet = false;
  // The seed of the blocks' order (block_orders); empty: drawn at random when the blocks start.
  std::optional<std::uint64_t> order_seed;
};

// Per figure, per prompt ("" for a per-launch figure), one launch's value: the median of that
// prompt's repetitions in the launch.
using LaunchUnits = std::map<std::string, std::map<std::string, double>>;

// The unit values of one timed launch: every figure of the side-by-side engine that has an
// extractor (figure/figure_registry.h kPairedEngine): a request's figure per prompt (the median of its
// repetitions), a round's and a launch's under "" (the median over the launch's rounds).
LaunchUnits launch_units(const TimedPass& pass);
// Whether a larger value of the figure is better: its registry entry says so
// (figure/figure_registry.h figure_lower_is_better).
bool higher_is_better(const std::string& figure);
// The kernel figures of one arm in one block, from its probed launch (flow/passes/probed_check.h
// run_probed_load): gpu_kernel_ms_per_token and attention_kernel_ms_per_token, one value per launch
// under "", of the golden path's definition (flow/passes/low_noise_figures.h kernel_time_per_token).
// A figure without kernel time (no attention kernel: a fallback) is left out. Host-side noise
// (scheduling, launch overhead, the CPU's other tenants) does not reach them; GPU clocks and the
// kernels do.
void add_kernel_units(LaunchUnits& units, const KernelTimePerToken& per_token);

struct ArmLaunch {
  int block = 0;
  std::string arm;
  double wall_s = 0;
  std::vector<std::string> errors;
  LaunchUnits units;
  std::map<std::string, std::string> answers;  // prompt id -> answer of this launch (last round)
  std::vector<std::string> signal_mismatches;
  std::optional<LaunchMemory> memory;  // from the timed launch's log and process (flow/passes/memory_figures.h)
  // The unit itl_mean_ms had before it pooled a launch's gaps (per prompt, the median over its rounds of
  // each request's median gap): kept in gate.json only, so that both units' block spread can be
  // compared on the same launches (bench/README.md section 3).
  std::map<std::string, double> itl_per_prompt_ms;
  // The unit itl_mean_ms had next (the median of every token gap of the launch), blind to a slowdown that
  // comes as stalls; kept in gate.json only, for the same comparison.
  std::optional<double> itl_gap_median_ms;
  // With decode probes (PairedPlan::decode_probes), itl_mean_ms comes from them; the same unit from the
  // launch's full requests is kept here, in gate.json only, for the same comparison.
  std::optional<double> itl_requests_ms;
  // How fast the machine was around the timed launch (TimedPass::reference_ms, throughput_ms).
  std::optional<double> reference_ms, throughput_ms;
  std::vector<double> throughput_samples_ms;  // TimedPass::throughput_samples_ms
  // Launched first in its block; empty (gate.json from before the random order): the fixed ABBA
  // order, a_first_in_block.
  std::optional<bool> first;
  bool interleaved = false;  // up beside the other arm's launch, requests in turn
};

// The per-prompt decode unit of one launch (ArmLaunch::itl_per_prompt_ms).
std::map<std::string, double> itl_per_prompt_ms(const TimedPass& pass);
// The pooled gap median of one launch (ArmLaunch::itl_gap_median_ms); none without a gap.
std::optional<double> itl_gap_median_ms(const TimedPass& pass);
// The median over the launch's full requests of each one's mean token gap (ArmLaunch::itl_requests_ms).
std::optional<double> itl_requests_ms(const TimedPass& pass);

// The decode probes of a plan whose gated figures and minimum effects are set: `requested` probes
// (the gate's --decode-probes; < 0: kDefaultDecodeProbes where itl_mean_ms gates, else none), none where
// the runtime cannot serve a prompt from its cache or the case's requests run all at once (batch).
// Where itl_mean_ms gates and comes from the probes, the full requests' decode (itl_requests_ms) is guarded
// at itl_mean_ms's own minimum effect: a probe decodes right after its request, yet a slowdown that grows
// with sustained load (a CPU quota spent by the prefill) reaches the requests' own decode more
// (bench/README.md section 3: +6-10% there against +3.4% on the probes). Its regression fails the
// case; unresolved, it holds the blocks only while its estimate is beyond its regression bound.
void apply_decode_probes(PairedPlan& plan, bool runtime_serves_probes, int requested);

struct PairedOutcome {
  std::string arm_a, arm_b;
  std::vector<ArmLaunch> launches;
  int blocks = 0;
  double wall_s = 0;
  std::string stopped;                       // why the blocks stopped, in words
  std::vector<FigureDecision> decisions;     // the gated figures
  std::vector<FigureDecision> guards;        // the guarded figures, at their guard effects (PairedPlan::guards)
  std::vector<FigureDecision> reported;      // every other figure, same statistics, not gated
  std::vector<std::string> errors;           // failed launches: the run is incomplete
  std::map<std::string, std::string> answers_a, answers_b;  // prompt id -> answer (first launch)
  std::vector<std::string> unstable;         // "arm: prompt" answers that changed between launches
  std::vector<std::string> pinning;          // where the client and the runtime ran, and how the launches met
  double budget_s = 0;                       // the budget in force (the default fixed at the first look)
  std::uint64_t order_seed = 0;              // the seed of the blocks' order (block_orders)
  double block_s = 0;                        // mean wall time of one block
  std::optional<int> first_forecast;         // at the first look: blocks in all a decision likely needs (the
                                             // first look's when it decided); empty: none likely would
  int looks = 0;                             // looks taken
  std::optional<LookSchedule> schedule;      // the looks, fixed at the first (measure/paired_stats.h)
  bool any_unresolved() const;               // a gated figure, or a guard beyond its regression bound (LoopLook)
  bool any_regression() const;   // a gated figure or a guard
};

// Called after every timed launch (A/B keeps its own per-arm figures and memory from it).
using LaunchHook = std::function<void(const PairedArm&, int block, const TimedPass&)>;

PairedOutcome run_paired(const PairedArm& a, const PairedArm& b, const PairedPlan& plan, const LaunchHook& hook = {});

// The paired units of one figure from the launches so far (both arms present in a block).
std::vector<PairedUnit> paired_units(const PairedOutcome& o, const std::string& figure);

// The median of arm A's units of `figure` so far: the reference a floor is turned into a relative
// effect by; NaN with no units.
double baseline_median(const PairedOutcome& o, const std::string& figure);

// The minimum effect's floor in words, for the figure's decision line: "floor 1 ms in force: 5% of
// the baseline's 8.13 ms is 0.407 ms", "floor 1 ms, not in force at the baseline's 812 ms"; empty
// without a floor or a reference. The unit is the figure name's last part (ttft_ms: ms).
std::string effect_note(const MinEffect& effect, double reference, const std::string& figure);

// Decides every figure from the launches so far at the level of `schedule`'s looks (fills decisions,
// guards and reported).
void decide_paired(PairedOutcome& o, const PairedPlan& plan, const LookSchedule& schedule);

// The A/B order of the blocks, true where arm A goes first: each pair of blocks is AB then BA, or
// BA then AB, at random from `seed`. Balanced as ABBA is (per pair, each arm once first and once
// second: a drift over a pair falls on both alike, and the position term sees both orders equally
// often), but with no fixed period: in the fixed ABBA order (A B | B A | A B | B A ...) arm B is
// always the 2nd and 3rd launch of every four, so a machine whose speed swings with a period near
// four launches lines up with one arm for a whole trial. Seen on batch-tiny, identical builds,
// blocks of 1.3 s: the candidate 3.6-13.9% slower in all 6 blocks whichever went first, "regression"
// at p 0.004; over 10 such trials the per-trial estimates spread 2.2 times wider than their own
// intervals allowed (bench/README.md section 3).
std::vector<bool> block_orders(int blocks, std::uint64_t seed);

// The fixed ABBA order gate runs had before the random one (A first in even blocks): how a recorded
// gate.json without each launch's "first" was run.
inline bool a_first_in_block(int k) { return k % 2 == 0; }

}  // namespace fp
