#include "flow/passes/timed_log_check.h"

namespace fp {

Result<TimedLogCheck> check_timed_log(const std::string& log_path, const RuntimeSignatures& sigs, const CheapSignals* evidence) {
  TimedLogCheck check;
  FP_TRY(check.log, analyse_log(log_path, sigs));
  check.signals = cheap_signals(check.log.scan);
  if (evidence) check.mismatches = compare_signals(*evidence, check.signals);
  return check;
}

}  // namespace fp
