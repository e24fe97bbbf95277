// Regular expressions for everything the harness matches (runtime data rules, log records, kernel
// names, its own small patterns): PCRE2, Perl syntax (lookahead included; the ECMAScript patterns
// of the data files read the same). Matching keeps its backtracking state on the heap, never one
// stack frame per character as libstdc++'s std::regex did, so a record of any length is searched
// whole: a signature at byte 200000 of a line is found. Patterns are JIT-compiled where the
// platform allows (the interpreter otherwise: same answers).
//
// A match that the engine gives up on (its match limit: a pattern that backtracks without end on
// a long text) is not a match, and says so (RegexMatch::gave_up) instead of crashing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace fp {

struct RegexCode;  // the compiled pattern (util/regex.cpp)

class Regex {
 public:
  Regex() = default;  // matches nothing until assigned
  // Compiles `pattern`; a bad pattern is an error naming it, the offset and PCRE2's reason.
  static Result<Regex> compile(const std::string& pattern, bool ignore_case = false);
  // For the harness's own patterns (constants): a bad one is a programming error and aborts.
  explicit Regex(const std::string& pattern, bool ignore_case = false);

  bool valid() const { return code_ != nullptr; }
  const std::string& pattern() const { return pattern_; }
  // Capturing groups of the pattern (group 0, the whole match, not counted).
  size_t mark_count() const { return groups_; }
  const RegexCode* code() const { return code_.get(); }

 private:
  std::shared_ptr<const RegexCode> code_;
  std::string pattern_;
  size_t groups_ = 0;
};

// One group of a match: a view into the searched text.
struct RegexGroup {
  bool matched = false;
  size_t position = 0;
  size_t length = 0;
  std::string_view text;
  std::string str() const { return std::string(text); }
};

// The groups of the last search (a view into the searched text: keep the text alive).
class RegexMatch {
 public:
  size_t size() const { return groups_.size(); }
  bool empty() const { return groups_.empty(); }
  RegexGroup operator[](size_t i) const { return i < groups_.size() ? groups_[i] : RegexGroup{}; }
  std::string str(size_t i = 0) const { return (*this)[i].str(); }
  size_t position(size_t i = 0) const { return (*this)[i].position; }
  size_t length(size_t i = 0) const { return (*this)[i].length; }
  // The engine stopped before deciding (its match limit); the search answered "no match".
  bool gave_up() const { return gave_up_; }

 private:
  friend bool regex_search(std::string_view, const Regex&, RegexMatch&, size_t, bool);
  friend bool regex_match(std::string_view, const Regex&, RegexMatch&);
  std::vector<RegexGroup> groups_;
  bool gave_up_ = false;
};

// First match at or after byte `start`; `anchored`: only at `start` itself.
bool regex_search(std::string_view text, const Regex& re, RegexMatch& m, size_t start = 0, bool anchored = false);
bool regex_search(std::string_view text, const Regex& re);
// The whole text matches.
bool regex_match(std::string_view text, const Regex& re, RegexMatch& m);
bool regex_match(std::string_view text, const Regex& re);
// Every non-overlapping match, in order (an empty match advances one byte).
std::vector<RegexMatch> regex_find_all(std::string_view text, const Regex& re);

}  // namespace fp
