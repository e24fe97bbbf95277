// The figures of a timed pass, named with their units, and which of them the case's job gates on:
// chat gates on time to first token (p95 per round), completion on time to first token and
// inter-token latency, extraction on exact answers only, batch on total throughput.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "flow/passes/timed_pass.h"
#include "measure/goodput.h"
#include "measure/ttft_split.h"
#include "report/run_result.h"

namespace fp {

std::vector<FigureResult> compute_figures(Job job, const TimedPass& pass);

// Whether a figure is better when lower, from its definition here: the rates (tokens or requests
// per second) and the share of requests that met the targets improve upward; every time, memory
// and load figure downward. A level's figure ("c<level>.<figure>") goes the way of its figure. The
// one direction the timed figures (FigureResult::lower_is_better, hence the goldens' "direction")
// and the paired engine read.
bool figure_lower_is_better(const std::string& name);

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

// The number llama-server reported under `key` in the request's "timings" (e.g. "prompt_ms"), or
// kNoValue where it reported none.
double server_number(const StreamResult& r, const char* key);

}  // namespace fp
