#include "evidence/log_records.h"

#include "util/text.h"

namespace fp {
namespace {

void add_record(std::vector<LogRecord>& out, size_t line, std::string_view piece, const std::string& process) {
  std::string text = trim(piece);
  if (!text.empty()) out.push_back({line, std::move(text), process});
}

// Removes the process label from the line's start; returns the label ("" when none).
std::string take_process(std::string& line, const std::optional<Rule>& prefix) {
  if (!prefix) return "";
  RegexMatch m;
  if (!regex_search(line, prefix->regex, m, 0, true)) return "";
  std::string label = trim(m.str(1));
  line = line.substr(static_cast<size_t>(m.length(0)));
  return label;
}

}  // namespace

std::vector<LogRecord> split_records(std::string_view log, const RuntimeSignatures& sigs) {
  std::vector<LogRecord> out;
  std::vector<std::string> lines = split_lines(log);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string& line = lines[i];
    const std::string process = take_process(line, sigs.process_prefix);
    if (!sigs.record_prefix) {
      add_record(out, i + 1, line, process);
      continue;
    }
    size_t piece_start = 0;
    for (const RegexMatch& m : regex_find_all(line, sigs.record_prefix->regex)) {
      add_record(out, i + 1, std::string_view(line).substr(piece_start, m.position(0) - piece_start), process);
      piece_start = m.position(0) + m.length(0);
    }
    add_record(out, i + 1, std::string_view(line).substr(piece_start), process);
  }
  return out;
}

}  // namespace fp
