// Compares a run's figures against this machine's golden, and builds a golden from a run's figures
// (for `run --record-missing` and `accept`). Both go by launches: a figure is one median per launch
// of the runtime. The rule itself (direction, minimum effect, noise band) is golden/threshold_policy.h;
// this file applies it figure by figure:
//   regressed | improved | within_noise | pass   as judge_change says (a regressed gated figure fails,
//                and so does a regressed guard: a figure a user feels at its guard effect)
//   memory.*     judged by golden/memory_policy.h: grew beyond the tolerance is regressed and fails
//                in every mode, dropped beyond it is improved (reported); a KV cache that moved
//                between devices fails (Comparison::memory_moves)
//   new          measured, no golden figure (reported, not a failure; `accept` adds it)
//   missing      golden figure not measured, or measured with no launches or non-finite launch
//                medians (fails the job if the figure gates: no evidence is never a pass)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "golden/golden_file.h"
#include "golden/memory_policy.h"
#include "golden/threshold_policy.h"
#include "measure/stats.h"
#include "util/result.h"

namespace fp {

// One figure as measured by this run: the median of each launch, in the figure's unit, the case's
// smallest worsening worth failing (case/case_file.h min_effect) and, for a figure a user feels, its
// guard (case/case_file.h guard_effect; applied where the golden does not gate the figure).
struct Measured {
  std::string name;
  std::vector<double> launch_medians;
  MinEffect min_effect{kNoValue, 0};
  std::optional<MinEffect> guard;
  BandSource band_source = BandSource::launches;  // what the values are (a golden recorded from them keeps it)
  // Earlier nights' values of this figure (this case, this fingerprint, as many launches as this
  // run; the median of each night's launch medians), oldest first: the band comes from them once
  // there are enough (golden/noise_band.h); otherwise the golden's launches widened for the sitting.
  std::vector<double> nights;
};

struct FigureComparison {
  std::string name;
  FigureStatus status = FigureStatus::pass;
  bool gate = false;     // from the golden; false for a new figure
  bool guard = false;    // not gated, judged at its guard effect (Measured::guard)
  bool memory = false;   // a memory figure (golden/memory_policy.h)
  bool failed = false;   // (gate || guard) && regressed, gate && missing, or memory grew
  double golden_median = kNoValue;    // NaN for a new figure
  double measured_median = kNoValue;  // median of the run's launch medians; NaN for a missing figure
  ChangeJudgement judgement;          // the rule's numbers; default (NaNs) when not compared
  std::optional<MemoryJudgement> memory_judgement;  // memory figures
  std::string message;  // one line: figure, status, change, medians, launches, min effect, noise band
};

// How busy the rest of the machine was (measure/machine_load.h: the share of all CPUs' time that
// processes other than the runtime and flashproof took while a launch was timed), one per launch. A night at least kBusierMargin busier than the golden's
// recording cannot tell a slower build from a busier machine on a host-clock figure: its regressions
// there are "within noise" (not judged tonight, said so); memory, GPU kernel time and answers are
// still judged. Measured here: a tiny chat case's TTFT p95 went 35 -> 167 ms (+375%) on the same build
// between a quiet moment and a night of four parallel compiles on 2 cores.
inline constexpr const char* kOtherLoadFigure = "machine.other_load";
inline constexpr double kBusierMargin = 0.25;

// The other way round: a golden recorded on a busy machine. Its host-clock figures carry that load
// (a tiny chat case's TTFT p95 186.9 ms recorded beside a second recording, 11.2 ms on a quiet
// machine), so a night judged against it passes whatever it does: a real 4x slowdown
// (--cpu-share 0.25) read "better by 59%" on a quiet night, and "better by 73%" against a golden
// recorded at load 0.90 on a night at 0.80 (how busy a load makes a figure is not proportional, so
// no allowance repairs it). A golden whose machine.other_load is above kBusyGoldenLimit is recorded
// all the same (a recording's answers and verdict do not depend on the load; the concurrency test
// records four at once) and marked as busy by that figure, said when it is recorded and accepted
// (busy_golden_text). Every comparison against it is UNTRUSTWORTHY: it fails
// (Comparison::untrustworthy) with the golden's load and how to record it again, instead of passing;
// host-clock regressions are still listed as regressions; memory, GPU kernel time and answers are
// judged as always.
inline constexpr double kBusyGoldenLimit = kBusierMargin;

// How fast this machine's cores were beside each launch (measure/reference_workload.h: the median
// time of a fixed single-threaded workload), one per launch. A night whose reference is at least
// kSlowerMargin slower than the golden's recording cannot tell a slower build from slower cores on a
// host-clock figure by the raw values: its regressions there are judged again with this run's values
// taken back to the golden's core speed (times divided by 1 + the slowdown, rates multiplied); what
// that explains is "within noise" (SLOWER MACHINE, said so), what it does not still fails; memory, GPU
// kernel time and answers are judged as always. The margin: the reference's spread between sittings on
// a quiet 2-core EPYC VM (bench/README.md section 7) is far below it; the slowdown that gave 11
// false alarms in 20 nights was +15..+29% in the runtime's own CPU time per token.
inline constexpr const char* kReferenceFigure = "machine.reference_ms";
inline constexpr double kSlowerMargin = 0.10;

// The second machine-speed reference (measure/throughput_reference.h: the median time of fixed
// float matrix-vector products split over all the process's CPUs, meeting at a barrier after each
// layer, as the runtime's CPU backend works), one per launch. The latency chain above is blind to
// what slows many threads' SIMD multiply-adds (a neighbour on the SMT siblings, one vCPU stolen):
// over 3 quiet same-build nights the runtime's CPU time per token rose +13..+20% while the chain
// read 4% faster. SLOWER MACHINE fires when either reference is more than kSlowerMargin slower than
// the golden's; a golden without a reference does not use it.
inline constexpr const char* kThroughputFigure = "machine.throughput_ms";

struct Comparison {
  std::vector<FigureComparison> figures;  // golden figures by name, then new ones by name
  std::vector<std::string> memory_moves;  // "KV CACHE MOVED: ..." (golden/memory_policy.h kv_cache_moved)
  std::string busier;                     // non-empty: the machine was busier than at the recording (in words)
  std::string other_machine;              // non-empty: the golden was recorded on another machine (in words)
  std::string slower;                     // non-empty: this machine's cores were slower than at the recording (in words: which reference, both values)
  std::string untrustworthy;              // non-empty: the golden was recorded on a busy machine (in words, both loads): a failure
  bool failed() const;                    // any figure failed, the KV cache moved, or the golden is untrustworthy
};

// "recorded while other processes took 50% of the machine's CPU time (machine.other_load 0.5, above the
// 25% a quiet recording stays under): ..." for a golden above kBusyGoldenLimit, else "".
std::string busy_golden_text(const Golden& golden);

// A golden recorded on another physical machine of the same fingerprint id (another GPU, by its
// UUID: the same model of GPU, driver and runtime build) judges what the GPU measures, not what the
// host's clock measures. Measured on H200 machines (bench/README.md, nightly): the same build's GPU
// kernel time per token within 1% from one machine to the next, its TTFT 114.6 ms on one and
// 152-189 ms on another (+33..+65%), prompt tokens/s 106k against 65-68k. Host-clock regressions are
// then "within noise" with this reason (OTHER MACHINE, never failed); memory, GPU kernel time,
// answers and the verdict are judged as always. Empty: the same machine, or not known.
// `same_gpu`: both fingerprints name the same GPU UUID(s), so GPU kernel time is widened by the
// smaller sitting spread of one GPU (golden/noise_band.h SittingScope).
struct GoldenOrigin {
  std::string other_machine;  // in words: which field differs, before -> after
  bool same_gpu = false;
};

// Errors only on malformed input: a figure measured twice, an empty figure name, or a compared
// figure without a valid minimum effect (> 0).
Result<Comparison> compare_to_golden(const Golden& golden, const std::vector<Measured>& measured,
                                     const GoldenOrigin& origin = {});

// Builds the golden a record or `accept` writes: per figure the median and MAD of its launch
// medians and n = launches (band_source from the Measured). Direction and gate come from `previous`
// when it has the figure (an operator's hand-made gate survives an accept), else from `policies`
// (find_policy); a memory figure is always lower-is-better and gated. Errors name the
// figure: no policy matches, no launches or non-finite ones, fewer than kMinGoldenLaunches launches
// (a golden of fewer has no spread to judge noise by). Never a silent default.
Result<Golden> golden_from_measured(const std::string& fingerprint, const std::vector<Measured>& measured,
                                    const std::map<std::string, FigurePolicy>& policies, const Golden* previous = nullptr);

}  // namespace fp
