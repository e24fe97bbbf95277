// The sustained phase of an A/B arm: the runtime launched afresh, one warm-up request, then
// `concurrency` streams kept in flight (libcurl multi, closed loop over the case's prompts) for
// `duration_s`. Shows queueing (time a request waits before its prompt is processed) and drift
// (the last window of requests against the first).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/stream_client.h"
#include "flow/passes/case_context.h"
#include "measure/ab_stats.h"
#include "measure/server_gauges.h"

namespace fp {

struct SustainedOptions {
  double duration_s = 10;
  int concurrency = 2;
};

struct SustainedRequest {
  std::string prompt_id;
  double start_s = 0;  // phase start -> request sent
  StreamResult result;
};

struct SustainedPass {
  std::vector<std::string> argv;
  std::string log_path;
  double wall_s = 0;                        // first request sent -> last request done
  std::vector<SustainedRequest> requests;   // in order of start
  std::vector<std::string> errors;
  std::optional<ServerGauges> server_gauges;  // the runtime's own metrics over the phase (runtime/metrics_data.h)
};

// Launches the runtime (log <out_dir>/sustained.log) and runs the phase. An error only when the
// runtime cannot be started; failed requests are listed in errors.
Result<SustainedPass> run_sustained_phase(const CaseContext& ctx, const SustainedOptions& options);

// Drift: one figure's first window of requests (by start time) against its last window.
struct Drift {
  std::string figure;
  size_t window = 0;       // requests per window
  AbResult first_vs_last;  // A = first window, B = last window
};

struct SustainedFigures {
  size_t requests = 0;
  int concurrency = 0;
  double wall_s = 0;
  std::vector<double> ttft_ms;   // time to first token, queueing included
  std::vector<double> queue_ms;  // client TTFT - server prompt_ms: waiting before the prompt ran
  std::vector<double> tpot_ms;
  double throughput_tokens_per_s = kNoValue;  // completion tokens / wall
  std::vector<Drift> drift;      // ttft_ms and tpot_ms, first quarter against last quarter
};

// Figures of a sustained pass. Drift needs at least 16 requests (windows of at least 4, the
// fewest with which the test can say "different" at all).
SustainedFigures sustained_figures(const SustainedPass& pass, int concurrency);

}  // namespace fp
