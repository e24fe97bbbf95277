// The timed runs of a case as several fresh launches (each a cold start of the runtime, through
// flow/passes/timed_pass.h): their figures pooled, and per figure the median of each launch, the unit a
// golden holds and a run is compared by (golden/threshold_policy.h).
#pragma once

#include <string>
#include <vector>

#include "case/case_file.h"
#include "flow/passes/timed_pass.h"
#include "result/run_result.h"

namespace fp {

// Where launch `index` (1-based) of a run keeps its timed.log: the run's folder for the first, so
// a one-launch run looks as it always did; <run>/launch-<index>/ for the others.
std::string launch_dir(const std::string& run_dir, int index);

// Every launch as one pass: requests in launch order with their rounds numbered on (launch 2's
// round 0 follows launch 1's last), batch round walls joined, the first launch's argv, log, ready
// time and cold first request, the highest peak RSS, every launch's errors.
TimedPass pooled_pass(const std::vector<TimedPass>& passes);

// The figures of all launches together (samples pooled), each with its launch medians: the median
// of that figure in each launch that measured it, in launch order.
std::vector<FigureResult> launch_figures(Job job, const std::vector<TimedPass>& passes);
// The same with the case's own figures (flow/passes/figures.h case_figures: concurrency levels, goodput).
std::vector<FigureResult> launch_figures(const Case& c, const std::vector<TimedPass>& passes);

}  // namespace fp
