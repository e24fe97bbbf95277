// The timed-log check: a timed launch's log read at levels 1 and 2 (flow/passes/evidence_pass.h
// analyse_log) and its cheap signals tied to the evidence pass's (evidence/signals.h). The one check
// a case run, A/B and the paired engine make after each timed launch.
#pragma once

#include <string>
#include <vector>

#include "evidence/signals.h"
#include "flow/passes/evidence_pass.h"

namespace fp {

struct TimedLogCheck {
  LogAnalysis log;                      // the launch's log, scanned (memory, KV cache, headroom read it)
  CheapSignals signals;                 // the launch's cheap signals
  std::vector<std::string> mismatches;  // against the evidence pass's signals (compare_signals); empty: they tie
};

// Reads the timed launch's log at `log_path` and, when `evidence` is given, compares its cheap
// signals with the evidence pass's (null: nothing to tie to, no mismatches). An error when the log
// cannot be read.
Result<TimedLogCheck> check_timed_log(const std::string& log_path, const RuntimeSignatures& sigs, const CheapSignals* evidence);

}  // namespace fp
