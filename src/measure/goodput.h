// Goodput: the requests that meet every latency target, as `vllm bench serve --goodput` and
// GenAI-Perf/AIPerf `--goodput` define it. A request is good when each targeted figure is at most
// its target (vLLM: `slo >= value`); the share is good / completed requests, the goodput good /
// duration (requests per second). TPOT of a request with one output token or none counts as 0, as
// vLLM counts it; a targeted figure that was not measured (no usage in the stream) is not met.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "measure/stats.h"

namespace fp {

// Targets in milliseconds; NaN: no target on that figure.
struct LatencyTargets {
  double ttft_ms = kNoValue;  // time to first token
  double tpot_ms = kNoValue;  // time per output token after the first
  double e2e_ms = kNoValue;   // end-to-end latency
  bool any() const;
  // "ttft_ms <= 500; tpot_ms <= 50"
  std::string text() const;
};

// One completed request's latencies in milliseconds; NaN where not measured.
struct RequestLatency {
  double ttft_ms = kNoValue;
  double tpot_ms = kNoValue;
  double e2e_ms = kNoValue;
};

bool meets_targets(const RequestLatency& r, const LatencyTargets& t);

struct Goodput {
  size_t requests = 0;        // completed requests judged
  size_t good = 0;            // of them, meeting every target
  double share = kNoValue;    // good / requests; NaN with no request
  double per_s = kNoValue;    // good / duration_s; NaN without a positive duration
};

// `duration_s`: the wall time the requests took (vLLM: the benchmark's duration).
Goodput goodput(const std::vector<RequestLatency>& requests, const LatencyTargets& t, double duration_s);

}  // namespace fp
