// The figures of a timed pass, named with their units, and which of them the case's job gates on:
// chat gates on time to first token (p95 per round), completion on time to first token and
// inter-token latency, extraction on exact answers only, batch on total throughput.
#pragma once

#include <string>
#include <vector>

#include "case/case_file.h"
#include "flow/timed_pass.h"
#include "report/run_result.h"

namespace fp {

std::vector<FigureResult> compute_figures(Job job, const TimedPass& pass);

// The client's time to first token against the server's own prompt time, in words:
// "client TTFT - server prompt_ms: median 1.234 ms, p99 2.345 ms over 9 requests".
std::string fidelity_summary(const TimedPass& pass);

}  // namespace fp
