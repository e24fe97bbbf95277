#include "evidence/log_records.h"

#include "util/text.h"

namespace fp {
namespace {

void add_record(std::vector<LogRecord>& out, size_t line, std::string_view piece, const std::string& process) {
  std::string text = trim(piece);
  if (!text.empty()) out.push_back({line, std::move(text), process});
}

// Cheap check before running the prefix regex on a line: the literal it needs.
bool may_have_prefix(const std::string& line, const Rule& prefix) {
  return prefix.literal.empty() || line.find(prefix.literal) != std::string::npos;
}

// Removes the process label from the line's start; returns the label ("" when none).
std::string take_process(std::string& line, const std::optional<Rule>& prefix) {
  if (!prefix || !may_have_prefix(line, *prefix)) return "";
  std::smatch m;
  if (!std::regex_search(line, m, prefix->regex) || m.position(0) != 0) return "";
  std::string label = trim(m[1].str());
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
    if (!sigs.record_prefix || !may_have_prefix(line, *sigs.record_prefix)) {
      add_record(out, i + 1, line, process);
      continue;
    }
    size_t piece_start = 0;
    auto it = std::sregex_iterator(line.begin(), line.end(), sigs.record_prefix->regex);
    for (; it != std::sregex_iterator(); ++it) {
      size_t pos = static_cast<size_t>(it->position(0));
      add_record(out, i + 1, std::string_view(line).substr(piece_start, pos - piece_start), process);
      piece_start = pos + static_cast<size_t>(it->length(0));
    }
    add_record(out, i + 1, std::string_view(line).substr(piece_start), process);
  }
  return out;
}

}  // namespace fp
