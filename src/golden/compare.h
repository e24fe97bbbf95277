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

struct Comparison {
  std::vector<FigureComparison> figures;  // golden figures by name, then new ones by name
  std::vector<std::string> memory_moves;  // "KV CACHE MOVED: ..." (golden/memory_policy.h kv_cache_moved)
  bool failed() const;                    // any figure failed, or the KV cache moved
};

// Errors only on malformed input: a figure measured twice, an empty figure name, or a compared
// figure without a valid minimum effect (> 0).
Result<Comparison> compare_to_golden(const Golden& golden, const std::vector<Measured>& measured);

// Builds the golden a record or `accept` writes: per figure the median and MAD of its launch
// medians and n = launches (band_source from the Measured). Direction and gate come from `previous`
// when it has the figure (an operator's hand-made gate survives an accept), else from `policies`
// (find_policy); a memory figure is always lower-is-better and gated. Errors name the
// figure: no policy matches, no launches or non-finite ones, fewer than kMinGoldenLaunches launches
// (a golden of fewer has no spread to judge noise by). Never a silent default.
Result<Golden> golden_from_measured(const std::string& fingerprint, const std::vector<Measured>& measured,
                                    const std::map<std::string, FigurePolicy>& policies, const Golden* previous = nullptr);

}  // namespace fp
