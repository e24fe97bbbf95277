#include "golden/answers.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <dtl/dtl.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/text.h"

namespace fp {

namespace {

namespace fs = std::filesystem;

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Appends the display pieces of one line (no '\n' inside).
void wrap_line(std::string_view line, size_t width, std::vector<std::string>& out) {
  size_t pos = 0;
  while (line.size() - pos > width) {
    size_t cut = std::string::npos;
    size_t space = line.rfind(' ', pos + width - 1);
    // Only a space that leaves a reasonably full piece; otherwise cut hard at the width.
    if (space != std::string_view::npos && space >= pos + width / 4) cut = space + 1;
    if (cut == std::string::npos) {
      cut = pos + width;
      while (cut > pos && is_utf8_continuation(line[cut])) --cut;
      if (cut == pos) cut = pos + width;  // not UTF-8 at all: bytes it is
    }
    out.emplace_back(std::string(line.substr(pos, cut - pos)) + "\\");
    pos = cut;
  }
  out.emplace_back(line.substr(pos));
}

std::string describe_at(std::string_view text, size_t i) {
  if (i >= text.size()) return "end of text";
  return quote(text.substr(i, 24));
}

// "first difference at byte N (line L, column C): reference has X, run has Y", 1-based.
std::string first_difference(std::string_view expected, std::string_view actual) {
  size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  size_t line = 1, line_start = 0;
  for (size_t k = 0; k < i; ++k)
    if (expected[k] == '\n') {
      ++line;
      line_start = k + 1;
    }
  return "first difference at byte " + std::to_string(i + 1) + " (line " + std::to_string(line) + ", column " +
         std::to_string(i - line_start + 1) + "): reference has " + describe_at(expected, i) + ", run has " +
         describe_at(actual, i) + "\n";
}

// Exact bytes of a file (no gunzip: an answer is whatever bytes the model sent).
Result<std::string> read_exact(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return make_error(path + ": read error");
  return ss.str();
}

}  // namespace

std::vector<std::string> wrap_for_diff(std::string_view text, size_t wrap_width) {
  if (wrap_width == 0) wrap_width = kAnswerWrapWidth;
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    wrap_line(text.substr(start, end - start), wrap_width, pieces);
    start = end + 1;
  }
  return pieces;
}

AnswerComparison compare_answer(const std::string& prompt_id, std::string_view expected, std::string_view actual,
                                size_t wrap_width) {
  AnswerComparison r;
  r.identical = expected == actual;
  if (r.identical) return r;
  std::vector<std::string> a = wrap_for_diff(expected, wrap_width), b = wrap_for_diff(actual, wrap_width);
  dtl::Diff<std::string, std::vector<std::string>> diff(a, b);
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  out << "--- reference/" << prompt_id << "\n+++ run/" << prompt_id << "\n";
  // dtl numbers an empty side "1,0"; GNU diff and patch expect "0,0" (only an empty text has an
  // empty side, since any common line would be context on both sides).
  auto hunks = diff.getUniHunks();
  for (auto& h : hunks) {
    if (h.b == 0) h.a = 0;
    if (h.d == 0) h.c = 0;
  }
  dtl::Diff<std::string, std::vector<std::string>>::printUnifiedFormat(hunks, out);
  out << first_difference(expected, actual);
  r.diff = out.str();
  return r;
}

Status validate_prompt_id(const std::string& id) {
  bool ok = !id.empty() && id.front() != '.';
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) ok = false;
  if (!ok)
    return make_error("prompt id " + quote(id) +
                      " is invalid: expected letters, digits, '_', '-', '.' (not starting with '.')");
  return ok_status();
}

std::string answer_path(const std::string& dir, const std::string& prompt_id) {
  return (fs::path(dir) / (prompt_id + ".txt")).string();
}

Result<std::string> load_reference_answer(const std::string& dir, const std::string& prompt_id) {
  FP_TRY_STATUS(validate_prompt_id(prompt_id));
  std::string path = answer_path(dir, prompt_id);
  std::error_code ec;
  if (!fs::exists(path, ec))
    return make_error(path + ": no reference answer for prompt " + quote(prompt_id) +
                      " (record one with accept)");
  return read_exact(path);
}

const char* to_string(AnswerChangeKind k) {
  switch (k) {
    case AnswerChangeKind::added: return "added";
    case AnswerChangeKind::changed: return "changed";
    case AnswerChangeKind::unchanged: return "unchanged";
  }
  return "?";
}

Result<std::vector<PlannedAnswerChange>> plan_answer_changes(const std::string& dir,
                                                             const std::map<std::string, std::string>& answers) {
  std::vector<PlannedAnswerChange> plan;
  for (const auto& [id, answer] : answers) {
    FP_TRY_STATUS(validate_prompt_id(id));
    PlannedAnswerChange change;
    change.prompt_id = id;
    std::string path = answer_path(dir, id);
    std::error_code ec;
    bool exists = fs::exists(path, ec);
    if (ec) return make_error(path + ": cannot check: " + ec.message());
    if (!exists) {
      change.kind = AnswerChangeKind::added;
    } else {
      FP_TRY(std::string stored, read_exact(path));
      AnswerComparison cmp = compare_answer(id, stored, answer);
      change.kind = cmp.identical ? AnswerChangeKind::unchanged : AnswerChangeKind::changed;
      change.diff = std::move(cmp.diff);
    }
    plan.push_back(std::move(change));
  }
  return plan;
}

Result<std::vector<PlannedAnswerChange>> save_reference_answers(const std::string& dir,
                                                                const std::map<std::string, std::string>& answers) {
  FP_TRY(std::vector<PlannedAnswerChange> plan, plan_answer_changes(dir, answers));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(dir + ": cannot create answers folder: " + ec.message());
  for (const PlannedAnswerChange& change : plan) {
    if (change.kind == AnswerChangeKind::unchanged) continue;
    FP_TRY_STATUS(write_file_atomic(answer_path(dir, change.prompt_id), answers.at(change.prompt_id)));
  }
  return plan;
}

}  // namespace fp
