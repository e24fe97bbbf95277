// What a case with workload fields (docs/workloads.md) asked for and what the runtime did, for the
// result's "workload" lines: token lengths asked against the runtime's own usage counts, the
// concurrency levels, the request rate, the targets and how many requests met them. A request whose
// token counts differ from what was asked (where they could be asked exactly) fails the run: the
// measured workload was not the one the case describes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "flow/passes/case_context.h"
#include "flow/passes/timed_pass.h"

namespace fp {

struct WorkloadSummary {
  std::vector<std::pair<std::string, std::string>> lines;  // key (after "workload.") -> value, in order
  std::vector<std::string> failures;
};

// `pooled`: every launch's timed requests (flow/passes/launches.h pooled_pass). Empty for a case without
// workload fields.
WorkloadSummary summarize_workload(const CaseContext& ctx, const TimedPass& pooled);

// "64 in 22, 65 in 2 of 24 requests": how often each count came back (-1: not reported).
std::string count_histogram(const std::vector<int>& counts);

}  // namespace fp
