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

// The server stopped answering during the phase (client/stream_client.h RequestFate): a finding
// about the arm, counted and quoted, not a reason to give up the A/B.
struct SustainedStop {
  std::string first_error;  // the request that stalled or found the server gone, as the client saw it
  bool stalled = true;      // no byte for stall_timeout_s (false: the server was gone)
  double stall_timeout_s = 0;
  double at_s = 0;  // seconds into the phase when it was called
  size_t stalled_n = 0, unreachable_n = 0, given_up_n = 0, not_sent_n = 0;
  std::string runtime_state;          // runtime/process.h process_group_state at that moment
  std::vector<std::string> log_tail;  // the runtime's last log lines at that moment (its log, read then)
  size_t log_bytes = 0;               // the log's size then
};

struct SustainedPass {
  std::vector<std::string> argv;
  std::string log_path;
  double duration_s = 0;                    // the phase's stated duration
  double wall_s = 0;                        // first request sent -> last request done
  std::vector<SustainedRequest> requests;   // in order of start
  size_t sent = 0;                          // requests sent (answered, failed, stalled, given up)
  size_t failed = 0;                        // answered with an error (HTTP status, bad event): the server still answered
  std::optional<SustainedStop> stopped;     // the server stopped answering: the phase stopped sending
  std::vector<std::string> errors;          // failures other than a stop (the launch, answers with errors)
  std::optional<ServerGauges> server_gauges;  // the runtime's own metrics over the phase (runtime/metrics_data.h)
};

// Launches the runtime (log <out_dir>/sustained.log) and runs the phase: a closed loop that starts
// no request after duration_s and stops sending at the first request that stalls or finds the
// server gone (SustainedPass::stopped), so that it ends within duration_s plus one request (or one
// stall timeout). An error only when the runtime cannot be started; requests answered with an
// error are listed in errors.
Result<SustainedPass> run_sustained_phase(const CaseContext& ctx, const LaunchPlacement& at, const SustainedOptions& options);

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

// "6 of 23 sustained requests sent no byte for 60 s (stalled), 1 given up with them, 40 not sent:
// the server stopped answering 6.2 s into the 10 s phase; the runtime was stopped (T: ...)", for
// ab.txt and ab.json; "" when the server never stopped answering.
std::string sustained_stop_line(const SustainedPass& pass);

// Figures of a sustained pass. Drift needs at least 16 requests (windows of at least 4, the
// fewest with which the test can say "different" at all).
SustainedFigures sustained_figures(const SustainedPass& pass, int concurrency);

}  // namespace fp
