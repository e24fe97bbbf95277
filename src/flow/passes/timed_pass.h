// The timed runs: the runtime launched with cheap logging only, cold start measured on its own,
// warm-up requests excluded, then repetition rounds over the case's prompts: one request at a time
// (batch: a round's prompts at once), or, for a case with plan.concurrency, the rounds of each
// concurrency level in turn (docs/workloads.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/stream_client.h"
#include "flow/passes/case_context.h"
#include "measure/free_memory.h"
#include "measure/server_gauges.h"
#include "flow/passes/step_turns.h"

namespace fp {

struct TimedRequest {
  std::string prompt_id;
  int round = 0;
  StreamResult result;
  double runtime_cpu_s = -1;  // CPU time the runtime's threads ran during this request (sequential rounds)
  int level = 0;              // the concurrency level it ran at; 0: the job's own way (no plan.concurrency)
  double sent_s = -1;         // when it was sent, seconds after the runtime was ready
};

struct TimedPass {
  std::vector<std::string> argv;
  std::string log_path;
  double ready_s = 0;                      // launch to healthy
  StreamResult cold_first;                 // the first request after ready, on its own
  std::string cold_first_prompt;
  std::vector<TimedRequest> requests;      // measured requests, every round
  std::vector<TimedRequest> probes;        // decode probes (TimedOptions::decode_probes), in the order sent
  std::vector<double> round_wall_s;        // batch job and concurrency levels: wall time of each concurrent round
  std::optional<uint64_t> peak_rss_bytes;  // the runtime's VmHWM just before it was stopped
  std::string gpu_memory = "not measured";
  std::optional<double> gpu_peak_mib;      // peak GPU memory of the runtime's processes (NVML); none: not measured
  std::optional<double> other_load;        // share of the machine's CPU time others took while timed (measure/machine_load.h)
  // The cores' speed, the mean of a sample before the launch and one after its timed requests:
  // a single-threaded latency chain (measure/reference_workload.h) and multiply-adds on all the
  // process's CPUs meeting at a barrier (measure/throughput_reference.h). None when attached.
  std::optional<double> reference_ms;
  std::optional<double> throughput_ms;
  // TimedOptions::machine_samples: the throughput reference timed before the launch, after every
  // measured request (every concurrent round), the runtime idle between them, and after the last:
  // how fast the cores were all through the launch (the side-by-side gate's covariate,
  // measure/paired_stats.h).
  std::vector<double> throughput_samples_ms;
  // The lowest memory left on the host and each GPU while the runtime served the requests (after the
  // warm-up and after every round): the headroom's "memory left" (measure/kv_headroom.h).
  FreeMemory free_memory_low;
  std::vector<std::string> errors;         // failed requests; a non-empty list makes the run incomplete
  // The runtime's own metrics over the measured requests (after the warm-up), where its data names
  // an endpoint (runtime/metrics_data.h); none where it names none.
  std::optional<ServerGauges> server_gauges;
};

// Options that A/B mode and tests override; the case's plan otherwise.
struct TimedOptions {
  int warmup = -1;
  int repetitions = -1;
  bool concurrent_rounds = false;  // batch: every prompt of a round in flight at once
  // Run the case's concurrency levels (plan.concurrency, plan.requests, plan.request_rate): round r
  // of level k is round k * repetitions + r of the pass. `flashproof run` sets it; A/B and the
  // side-by-side gate measure the job's own way.
  bool levels = false;
  // Time the throughput reference between the measured requests as well (TimedPass::
  // throughput_samples_ms): about 15 ms each on a 2-core VM, never while a request is in flight.
  bool machine_samples = false;
  // Interleaved with another pass on the same machine (the side-by-side gate, flow/paired/
  // alternation.h): every step waits for its turn; the waits do not count against the timeout.
  // other_load is not measured then (the other pass's runtime would count as the machine's others).
  StepTurns* turns = nullptr;
  // After each measured request of the sequential rounds, this many decode probes: the same prompt
  // again with the runtime data's decode_probe fields (its prompt cache), each a step of its own,
  // into TimedPass::probes. A probe's prefill is a token or so, so it costs little more than its
  // decode, and its token gaps are the decode at the case's context depth. Why the gate wants them:
  // on a 2-core VM a request's decode speed varies 5-15% from one request to the next whatever its
  // length (32 or 256 tokens alike), so the decode figure resolves with more requests, not longer
  // ones, and a probe is a request without the prefill's seconds (bench/README.md section 3).
  // Ignored without the adapter's decode_probe.
  int decode_probes = 0;
};

// One timed launch of `ctx` placed by `at` (its folder: timed.log), or the attached server.
Result<TimedPass> run_timed_pass(const CaseContext& ctx, const LaunchPlacement& at, const TimedOptions& options);

// Requests per round at a concurrency level: plan.requests, else the level or the number of
// prompts, whichever is larger (prompts are used in turn).
size_t level_requests(const Case& c, int level, size_t prompts);

}  // namespace fp
