// The figures of a timed pass, named with their units, and which of them the case's job gates on:
// chat gates on time to first token (p95 per round), completion on time to first token and
// inter-token latency, extraction on exact answers only, batch on total throughput.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "figure/figure_registry.h"
#include "flow/passes/timed_pass.h"
#include "measure/goodput.h"
#include "measure/ttft_split.h"
#include "result/run_result.h"

namespace fp {

// The golden engine's figures of a pass (figure/figure_registry.h kGoldenEngine), in registry order,
// each from its extractor; the job decides which gate.
std::vector<FigureResult> compute_figures(Job job, const TimedPass& pass);

// What the registry's extractors read: one measured request (the client's clock, the runtime's own
// timings as its runtime data names them), the rounds of a pass, one launch.
RequestFacts request_facts(const TimedRequest& tr);
LaunchFacts launch_facts(const TimedPass& pass);
// The pass's rounds in order, each pointing into `requests` (request_facts of pass.requests, in order):
// every round a request ran in or a wall time was measured for.
std::vector<RoundFacts> round_facts(const TimedPass& pass, const std::vector<RequestFacts>& requests);

// The figures of a case's timed pass (docs/workloads.md). Without plan.concurrency, the job's own
// (compute_figures). With it, each level's figures on their own, named "c<level>.<figure>", the
// job's gates applying at every level, plus requests_per_s. With targets, the share of requests
// meeting every target (goodput_share, per round) and the goodput (goodput_requests_per_s), per
// level where there are levels; goodput_share gates only when the targets say "gate": true.
std::vector<FigureResult> case_figures(const Case& c, const TimedPass& pass);

// The case's targets for measure/goodput.h, and one request's latencies as goodput judges them
// (TPOT 0 with one output token or none, as vLLM counts it).
LatencyTargets latency_targets(const Targets& t);
RequestLatency request_latency(const StreamResult& r);

// The requests of one concurrency level as a pass of their own (rounds numbered from 0).
TimedPass level_pass(const TimedPass& pass, int level);

// A round's duration for goodput: its wall time where measured (concurrent rounds), else from the
// first request sent to the last one done. Keyed by round.
std::map<int, double> round_durations_s(const TimedPass& pass);

// The client's time to first token against the server's own prompt time, in words:
// "client TTFT - server prompt_ms: median 1.234 ms, p99 2.345 ms over 9 requests".
std::string fidelity_summary(const TimedPass& pass);

// What each measured request's TTFT is made of, from the runtime's own timings (measure/ttft_split.h).
TtftSplit ttft_split_of(const TimedPass& pass);

}  // namespace fp
