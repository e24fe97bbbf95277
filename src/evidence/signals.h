// Cheap signals: facts present both in the verbose evidence pass and in a quiet timed run, used to
// tie the timed runs to the evidence (same resolved flash-attention state, same graph split counts).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evidence/log_scan.h"

namespace fp {

struct CheapSignals {
  std::optional<bool> flash_attn;  // resolved state; null when the log does not say
  std::vector<int> graph_splits;   // distinct counts, ascending
  std::vector<std::string> attention_backends;  // decided backends (vLLM), sorted; empty when none named
};

CheapSignals cheap_signals(const LogScan& scan);

// "flash attention enabled; graph splits 1" (or "not stated" for what the log does not say).
std::string signals_text(const CheapSignals& s);

// Mismatches between the evidence pass and a timed run, as human text; empty when they tie.
// A signal the evidence pass has and the timed run lacks is a mismatch (it cannot be tied).
std::vector<std::string> compare_signals(const CheapSignals& evidence, const CheapSignals& timed);

}  // namespace fp
