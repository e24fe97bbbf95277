#include "measure/prometheus_text.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "util/split_list.h"
#include "util/text.h"

namespace fp {
namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

std::optional<double> number(std::string_view s) {
  if (s == "+Inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s.empty()) return std::nullopt;
  const std::string t(s);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return v;
}

// `{a="x",b="y\"z"}` from s[at] == '{'; advances `at` past '}'. Empty optional on a syntax error.
std::optional<std::map<std::string, std::string>> labels(std::string_view s, size_t& at) {
  std::map<std::string, std::string> out;
  ++at;  // '{'
  while (at < s.size()) {
    while (at < s.size() && (s[at] == ' ' || s[at] == ',')) ++at;
    if (at < s.size() && s[at] == '}') {
      ++at;
      return out;
    }
    const size_t start = at;
    while (at < s.size() && name_char(s[at])) ++at;
    if (at == start || at + 1 >= s.size() || s[at] != '=' || s[at + 1] != '"') return std::nullopt;
    std::string key(s.substr(start, at - start)), value;
    at += 2;
    for (; at < s.size() && s[at] != '"'; ++at) {
      if (s[at] == '\\' && at + 1 < s.size()) {
        ++at;
        value += s[at] == 'n' ? '\n' : s[at];
      } else {
        value += s[at];
      }
    }
    if (at >= s.size()) return std::nullopt;
    ++at;  // closing quote
    out[key] = value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> PromText::value(const std::string& name) const {
  for (const auto& s : samples)
    if (s.name == name) return s.value;
  return std::nullopt;
}

Result<PromText> parse_prometheus_text(std::string_view text, const std::string& source) {
  PromText out;
  size_t line_no = 0;
  for (const std::string& raw : split_lines(text)) {
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty()) continue;
    auto bad = [&](const std::string& what) {
      return make_error(source + ": line " + std::to_string(line_no) + ": " + quote(line.substr(0, 200)) + ": " + what +
                        "; expected `name{label=\"value\",...} value [timestamp]` or a # comment");
    };
    if (line[0] == '#') {
      const auto words = split_list(line, ' ', ListItems::NonEmpty);
      if (words.size() >= 4 && words[1] == "TYPE") out.types[words[2]] = words[3];
      continue;
    }
    size_t at = 0;
    if (!name_start(line[0])) return bad("a metric name starts with a letter, '_' or ':'");
    while (at < line.size() && name_char(line[at])) ++at;
    PromSample s;
    s.name = line.substr(0, at);
    if (at < line.size() && line[at] == '{') {
      auto l = labels(line, at);
      if (!l) return bad("labels are not name=\"value\" pairs in braces");
      s.labels = std::move(*l);
    }
    const auto rest = split_list(std::string_view(line).substr(at), ' ', ListItems::NonEmpty);
    if (rest.empty() || rest.size() > 2) return bad("a sample has a value and at most a timestamp after its name");
    auto v = number(rest[0]);
    if (!v) return bad("value " + quote(rest[0]) + " is not a number");
    s.value = *v;
    out.samples.push_back(std::move(s));
  }
  return out;
}

}  // namespace fp
