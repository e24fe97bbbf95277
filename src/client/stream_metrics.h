// vLLM-style figures derived from a StreamResult (docs/runtimes.md section 5).
#pragma once

#include <vector>

#include "client/stream_client.h"
#include "util/result.h"

namespace fp {

// Time per output token after the first: (e2e - ttft) / (completion_tokens - 1), as vLLM's
// `bench serve` defines TPOT. Needs usage with completion_tokens >= 2 and both times measured.
Result<double> tpot_s(const StreamResult& r);

// Gaps between consecutive content events (vLLM's ITL is measured the same way, per chunk).
// A gap is measured over EVENTS, not tokens: one event may carry several tokens (llama-server
// holds back the bytes of an unfinished UTF-8 character and sends them with the next token),
// so gaps.size() + 1 == content events <= completion_tokens. Use tpot_s for a per-token figure.
std::vector<double> inter_event_gaps_s(const StreamResult& r);

}  // namespace fp
