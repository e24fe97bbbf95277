// Splits a runtime log into records. ggml's scheduler debug output writes several records into one
// physical line, each with its own timestamp prefix, so records, not lines, are the unit of evidence.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evidence/runtime_signatures.h"

namespace fp {

// One log record: its text without the prefix, trimmed, and the 1-based line where it starts.
struct LogRecord {
  size_t line = 0;
  std::string text;
  std::string process;  // the line's process label (vLLM "EngineCore_DP0 pid=7"), "" when not labelled
};

// Records of the log: the runtime's process prefix, when it has one, is removed from the start
// of each physical line and kept as the records' process label; then each line is cut before
// every match of the runtime's record prefix (which is removed); a line without a prefix is one
// record. Empty records are dropped.
std::vector<LogRecord> split_records(std::string_view log, const RuntimeSignatures& sigs);

}  // namespace fp
