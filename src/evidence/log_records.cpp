#include "evidence/log_records.h"

#include "util/text.h"

namespace fp {
namespace {

void add(std::vector<LogRecord>& out, size_t line, std::string_view piece) {
  std::string text = trim(piece);
  if (!text.empty()) out.push_back({line, std::move(text)});
}

// Cheap check before running the prefix regex on a line: the literal it needs.
bool may_have_prefix(const std::string& line, const Rule& prefix) {
  return prefix.literal.empty() || line.find(prefix.literal) != std::string::npos;
}

}  // namespace

std::vector<LogRecord> split_records(std::string_view log, const RuntimeSignatures& sigs) {
  std::vector<LogRecord> out;
  std::vector<std::string> lines = split_lines(log);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (!sigs.record_prefix || !may_have_prefix(line, *sigs.record_prefix)) {
      add(out, i + 1, line);
      continue;
    }
    size_t piece_start = 0;
    auto it = std::sregex_iterator(line.begin(), line.end(), sigs.record_prefix->regex);
    for (; it != std::sregex_iterator(); ++it) {
      size_t pos = static_cast<size_t>(it->position(0));
      add(out, i + 1, std::string_view(line).substr(piece_start, pos - piece_start));
      piece_start = pos + static_cast<size_t>(it->length(0));
    }
    add(out, i + 1, std::string_view(line).substr(piece_start));
  }
  return out;
}

}  // namespace fp
