#include "util/regex.h"

#include <cstdio>
#include <algorithm>
#include <cstdlib>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace fp {

struct RegexCode {
  pcre2_code* code = nullptr;   // the pattern, for searches
  pcre2_code* whole = nullptr;  // (?:pattern)\z anchored at the start, for regex_match
  ~RegexCode() {
    pcre2_code_free(code);
    pcre2_code_free(whole);
  }
};

namespace {

// Per thread: the JIT's stack (on the heap, grown to at most 64 MiB, reserved only as used) and the match context that
// names it and caps the interpreter's backtracking memory (256 MiB). A search that outgrows the JIT's
// stack is run again by the interpreter; one that outgrows that too gives up (RegexMatch::gave_up)
// instead of growing without bound.
struct MatchResources {
  static constexpr uint32_t kPairs = 64;  // groups of the patterns here: far fewer
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  pcre2_match_data* data = nullptr;
  MatchResources() {
    data = pcre2_match_data_create(kPairs, nullptr);
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(64 * 1024, 64 * 1024 * 1024, nullptr);
    if (context && jit_stack) pcre2_jit_stack_assign(context, nullptr, jit_stack);
    if (context) pcre2_set_heap_limit(context, 256 * 1024);  // KiB: 256 MiB of backtracking state
  }
  ~MatchResources() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

MatchResources& resources() {
  thread_local MatchResources r;
  return r;
}

pcre2_code* compile_code(const std::string& pattern, uint32_t options, int& err, PCRE2_SIZE& offset) {
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &err, &offset, nullptr);
  if (code) pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // where the JIT is missing, the interpreter answers
  return code;
}

std::string error_text(int code) {
  PCRE2_UCHAR buf[256];
  int n = pcre2_get_error_message(code, buf, sizeof buf);
  return n < 0 ? "error " + std::to_string(code) : std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

}  // namespace

Result<Regex> Regex::compile(const std::string& pattern, bool ignore_case) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  // No multi-line anchors and "$" at the very end only: what std::regex's ECMAScript grammar meant.
  uint32_t options = PCRE2_DOLLAR_ENDONLY | (ignore_case ? PCRE2_CASELESS : 0u);
  pcre2_code* code = compile_code(pattern, options, err, offset);
  if (!code)
    return make_error("not a valid regular expression: " + error_text(err) + " at offset " + std::to_string(offset));
  auto owned = std::make_shared<RegexCode>();
  owned->code = code;
  owned->whole = compile_code("(?:" + pattern + ")\\z", options | PCRE2_ANCHORED, err, offset);
  if (!owned->whole)  // a pattern that is valid alone is valid wrapped; say so if not
    return make_error("not a valid regular expression as a whole-text match: " + error_text(err));
  uint32_t groups = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &groups);
  Regex re;
  re.code_ = std::move(owned);
  re.pattern_ = pattern;
  re.groups_ = groups;
  return re;
}

Regex::Regex(const std::string& pattern, bool ignore_case) {
  auto r = compile(pattern, ignore_case);
  if (!r) {
    std::fprintf(stderr, "flashproof: internal pattern %s: %s\n", pattern.c_str(), r.error().message.c_str());
    std::abort();
  }
  *this = std::move(*r);
}

namespace {

bool run_match(const pcre2_code* code, size_t groups, std::string_view text, size_t start, uint32_t options,
               std::vector<RegexGroup>& out, bool& gave_up) {
  out.clear();
  gave_up = false;
  MatchResources& r = resources();
  const size_t pairs = groups + 1;
  pcre2_match_data* data = pairs <= MatchResources::kPairs ? r.data : pcre2_match_data_create_from_pattern(code, nullptr);
  if (!data) return false;
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start, options, data,
                       r.context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // the interpreter keeps its state on the heap, within the heap limit
    rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start, options | PCRE2_NO_JIT, data,
                     r.context);
  bool found = rc >= 0;
  if (!found) {
    gave_up = rc != PCRE2_ERROR_NOMATCH;
  } else {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data);
    const size_t set = rc == 0 ? pairs : std::min(pairs, static_cast<size_t>(rc));
    out.resize(pairs);
    for (size_t i = 0; i < set; ++i) {
      if (ov[2 * i] == PCRE2_UNSET) continue;
      RegexGroup& g = out[i];
      g.matched = true;
      g.position = ov[2 * i];
      g.length = ov[2 * i + 1] - ov[2 * i];
      g.text = text.substr(g.position, g.length);
    }
  }
  if (data != r.data) pcre2_match_data_free(data);
  return found;
}

}  // namespace

bool regex_search(std::string_view text, const Regex& re, RegexMatch& m, size_t start, bool anchored) {
  if (!re.valid() || start > text.size()) {
    m.groups_.clear();
    m.gave_up_ = false;
    return false;
  }
  return run_match(re.code()->code, re.mark_count(), text, start, anchored ? PCRE2_ANCHORED : 0u, m.groups_,
                   m.gave_up_);
}

bool regex_search(std::string_view text, const Regex& re) {
  RegexMatch m;
  return regex_search(text, re, m);
}

bool regex_match(std::string_view text, const Regex& re, RegexMatch& m) {
  if (!re.valid()) {
    m.groups_.clear();
    m.gave_up_ = false;
    return false;
  }
  return run_match(re.code()->whole, re.mark_count(), text, 0, 0u, m.groups_, m.gave_up_);
}

bool regex_match(std::string_view text, const Regex& re) {
  RegexMatch m;
  return regex_match(text, re, m);
}

std::vector<RegexMatch> regex_find_all(std::string_view text, const Regex& re) {
  std::vector<RegexMatch> out;
  size_t at = 0;
  RegexMatch m;
  while (at <= text.size() && regex_search(text, re, m, at)) {
    const size_t end = m.position(0) + m.length(0);
    at = m.length(0) == 0 ? end + 1 : end;
    out.push_back(m);
  }
  return out;
}

}  // namespace fp
