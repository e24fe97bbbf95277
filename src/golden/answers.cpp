#include "golden/answers.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
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

// The length (1..4) of the valid UTF-8 character at s[i], or 0 when none starts there (a stray
// continuation byte, an overlong form, a surrogate, a sequence cut short).
size_t utf8_length_at(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (Unicode table 3-7)
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if (b(i + k) < (k == 1 ? lo : 0x80) || b(i + k) > (k == 1 ? hi : 0xBF)) return 0;
  return len;
}

// The next character's end from i: a valid character whole, an invalid byte alone.
size_t next_char(std::string_view s, size_t i) { return i + std::max<size_t>(1, utf8_length_at(s, i)); }

// Appends the display pieces of one line (no '\n' inside), `width` characters at most each; a
// byte that is not UTF-8 is one character, shown as U+FFFD (the first-difference line names it).
void wrap_line(std::string_view line, size_t width, std::vector<std::string>& out) {
  struct Char {
    size_t at, len;  // len 0: a byte that is not UTF-8
  };
  std::vector<Char> chars;
  for (size_t i = 0; i < line.size();) {
    const size_t len = utf8_length_at(line, i);
    chars.push_back({i, len});
    i += std::max<size_t>(len, 1);
  }
  auto piece = [&](size_t from, size_t to) {
    std::string p;
    for (size_t k = from; k < to; ++k)
      p += chars[k].len ? std::string(line.substr(chars[k].at, chars[k].len)) : std::string("\xEF\xBF\xBD");
    return p;
  };
  size_t pos = 0;
  while (chars.size() - pos > width) {
    // At the last space within the width that leaves a reasonably full piece; otherwise hard at the width.
    size_t cut = pos + width;
    for (size_t k = pos + width; k-- > pos + width / 4;)
      if (chars[k].len == 1 && line[chars[k].at] == ' ') {
        cut = k + 1;
        break;
      }
    out.push_back(piece(pos, cut) + "\\");
    pos = cut;
  }
  out.push_back(piece(pos, chars.size()));
}

// Up to `chars` characters of `text` from byte i, quoted: always whole characters, so the quote is
// valid UTF-8 whatever the text; a byte that is not UTF-8 is shown as U+FFFD and named after it.
std::string describe_at(std::string_view text, size_t i, size_t chars = 24) {
  if (i >= text.size()) return "end of text";
  std::string window, bad;
  for (size_t n = 0; n < chars && i < text.size(); ++n) {
    const size_t len = utf8_length_at(text, i);
    if (len) {
      window.append(text.substr(i, len));
      i += len;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[i]));
    bad += (bad.empty() ? "" : " ") + std::string(hex);
    window += "\xEF\xBF\xBD";  // U+FFFD
    ++i;
  }
  return quote(window) + (bad.empty() ? "" : " (bytes that are not UTF-8, shown as U+FFFD: " + bad + ")");
}

// "first difference at character N (line L, column C): reference has X, run has Y", 1-based, counted
// in characters (a byte that is not UTF-8 counts as one); the byte offset too where it differs. The
// difference starts at the character holding the first differing byte: "é" against "è" (C3 A9, C3
// A8) differ at their second byte, and are quoted from their first.
std::string first_difference(std::string_view expected, std::string_view actual) {
  size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  size_t start = 0, chars = 0, line = 1, column = 0;
  for (size_t k = 0; k < i;) {
    const size_t next = next_char(expected, k);
    if (next > i) break;  // the differing byte is inside this character: it starts here
    ++chars;
    ++column;
    if (expected[k] == '\n') {
      ++line;
      column = 0;
    }
    k = start = next;
  }
  const std::string at = "character " + std::to_string(chars + 1) + (start == chars ? "" : ", byte " + std::to_string(start + 1));
  return "first difference at " + at + " (line " + std::to_string(line) + ", column " + std::to_string(column + 1) +
         "): reference has " + describe_at(expected, start) + ", run has " + describe_at(actual, start) + "\n";
}

// Exact bytes of a file (no gunzip: an answer is whatever bytes the model sent).
Result<std::string> read_exact(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st))
    return make_error(path + ": a folder, not a reference answer file (remove it, or record the answer again with accept)");
  if (fs::exists(st) && !fs::is_regular_file(st)) return make_error(path + ": not a regular file, so not a reference answer");
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
