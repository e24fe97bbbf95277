#include "evidence/causes.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "evidence/log_records.h"
#include "util/json_fields.h"
#include "util/text.h"

namespace fp {
namespace {

using nlohmann::json;

Result<std::string> text_of(const json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    std::string s = std::to_string(v.get<double>());
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  return error_at(where, "value " + quote(v.dump()) + " is not a string or a number");
}

Result<std::vector<std::string>> texts_of(const json& v, const std::string& where) {
  if (!v.is_array()) return error_at(where, "value " + quote(v.dump()) + " is not a list");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    FP_TRY(std::string t, text_of(v[i], where + "[" + std::to_string(i) + "]"));
    out.push_back(t);
  }
  return out;
}

Result<Regex> compile(const std::string& pattern, const std::string& where) {
  auto re = Regex::compile(pattern);
  if (!re) return error_at(where, "value " + quote(pattern) + " is " + re.error().message);
  return re;
}

// {"head_size": [40, 64]} for in / not_in.
Status parse_sets(const json& obj, FactTest::Kind kind, const std::string& where, std::vector<FactTest>& out) {
  if (!obj.is_object()) return error_at(where, "value " + quote(obj.dump()) + " is not an object of fact -> list");
  for (const auto& [fact, list] : obj.items()) {
    FactTest t;
    t.fact = fact;
    t.kind = kind;
    FP_TRY(t.values, texts_of(list, where + "." + fact));
    out.push_back(std::move(t));
  }
  return ok_status();
}

Result<ConditionGroup> parse_group(const json& obj, const std::string& where) {
  FP_TRY_STATUS(only_keys(obj, where, KeyWording::KeyList, {"fact_in", "fact_not_in", "fact_matches", "fact_below", "fact_at_most", "facts_differ",
                                       "fact_not_multiple_of", "log", "no_log", "log_facts"}));
  ConditionGroup g;
  if (obj.contains("fact_in")) FP_TRY_STATUS(parse_sets(obj.at("fact_in"), FactTest::Kind::In, where + ".fact_in", g.facts));
  if (obj.contains("fact_not_in"))
    FP_TRY_STATUS(parse_sets(obj.at("fact_not_in"), FactTest::Kind::NotIn, where + ".fact_not_in", g.facts));
  if (obj.contains("fact_matches")) {
    const json& m = obj.at("fact_matches");
    if (!m.is_object()) return error_at(where + ".fact_matches", "value is not an object of fact -> pattern");
    for (const auto& [fact, p] : m.items()) {
      FactTest t;
      t.fact = fact;
      t.kind = FactTest::Kind::Matches;
      FP_TRY(t.pattern, text_of(p, where + ".fact_matches." + fact));
      FP_TRY(t.regex, compile(t.pattern, where + ".fact_matches." + fact));
      g.facts.push_back(std::move(t));
    }
  }
  // {"gpu_layers": "layers"} or {"compute_capability": 8.0}: fact_below (<), fact_at_most (<=).
  for (const auto& [key, kind] : {std::pair<const char*, FactTest::Kind>{"fact_below", FactTest::Kind::Below},
                                  std::pair<const char*, FactTest::Kind>{"fact_at_most", FactTest::Kind::AtMost}}) {
    if (!obj.contains(key)) continue;
    const json& b = obj.at(key);
    const std::string w = where + "." + key;
    if (!b.is_object()) return error_at(w, "value is not an object of fact -> number or fact name");
    for (const auto& [fact, v] : b.items()) {
      FactTest t;
      t.fact = fact;
      t.kind = kind;
      if (v.is_number()) t.number = v.get<double>();
      else if (v.is_string()) t.other_fact = v.get<std::string>();
      else return error_at(w + "." + fact, "value " + quote(v.dump()) + " is not a number or a fact name");
      g.facts.push_back(std::move(t));
    }
  }
  if (obj.contains("fact_not_multiple_of")) {  // {"head_size": 8}
    const json& m = obj.at("fact_not_multiple_of");
    if (!m.is_object()) return error_at(where + ".fact_not_multiple_of", "value is not an object of fact -> whole number");
    for (const auto& [fact, v] : m.items()) {
      if (!v.is_number_integer() || v.get<long long>() < 2)
        return error_at(where + ".fact_not_multiple_of." + fact, "value " + quote(v.dump()) + " is not a whole number of 2 or more");
      FactTest t;
      t.fact = fact;
      t.kind = FactTest::Kind::NotMultipleOf;
      t.number = static_cast<double>(v.get<long long>());
      g.facts.push_back(std::move(t));
    }
  }
  if (obj.contains("facts_differ")) {  // ["cache_type_k", "cache_type_v"]
    FP_TRY(std::vector<std::string> pair, texts_of(obj.at("facts_differ"), where + ".facts_differ"));
    if (pair.size() != 2) return error_at(where + ".facts_differ", "expected two fact names");
    FactTest t;
    t.fact = pair[0];
    t.kind = FactTest::Kind::DiffersFrom;
    t.other_fact = pair[1];
    g.facts.push_back(std::move(t));
  }
  if (obj.contains("log")) {
    FP_TRY(g.log_pattern, text_of(obj.at("log"), where + ".log"));
    FP_TRY(g.log, compile(g.log_pattern, where + ".log"));
  }
  if (obj.contains("no_log")) {
    FP_TRY(g.no_log_pattern, text_of(obj.at("no_log"), where + ".no_log"));
    FP_TRY(g.no_log, compile(g.no_log_pattern, where + ".no_log"));
  }
  if (obj.contains("log_facts")) {
    const json& lf = obj.at("log_facts");
    if (g.log_pattern.empty()) return error_at(where + ".log_facts", "needs \"log\": the pattern whose groups it names");
    if (!lf.is_object()) return error_at(where + ".log_facts", "value is not an object of fact -> group");
    for (const auto& [fact, idx] : lf.items()) {
      if (!idx.is_number_integer() || idx.get<int>() < 1 || idx.get<size_t>() > g.log.mark_count())
        return error_at(where + ".log_facts." + fact, "value " + quote(idx.dump()) + " is not a group of \"log\" (1.." +
                                                     std::to_string(g.log.mark_count()) + ")");
      g.log_facts[fact] = idx.get<int>();
    }
  }
  if (g.facts.empty() && g.log_pattern.empty() && g.no_log_pattern.empty())
    return error_at(where, "no condition; valid: fact_in, fact_not_in, fact_matches, fact_below, fact_at_most, facts_differ, "
                      "fact_not_multiple_of, log, no_log");
  return g;
}

Result<CauseExample> parse_example(const json& obj, const std::string& where) {
  FP_TRY_STATUS(only_keys(obj, where, KeyWording::KeyList, {"facts", "log", "comment"}));
  CauseExample ex;
  if (obj.contains("facts")) {
    const json& f = obj.at("facts");
    if (!f.is_object()) return error_at(where + ".facts", "value is not an object of fact -> value");
    for (const auto& [k, v] : f.items()) {
      FP_TRY(ex.facts[k], text_of(v, where + ".facts." + k));
    }
  }
  if (obj.contains("log")) {
    FP_TRY(ex.log, texts_of(obj.at("log"), where + ".log"));
  }
  return ex;
}

Result<std::vector<CauseExample>> parse_examples(const json& obj, const std::string& key, const std::string& where) {
  std::vector<CauseExample> out;
  if (!obj.contains(key)) return out;
  const json& list = obj.at(key);
  if (!list.is_array()) return error_at(where + "." + key, "value is not a list of {facts, log}");
  for (size_t i = 0; i < list.size(); ++i) {
    FP_TRY(CauseExample ex, parse_example(list[i], where + "." + key + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(ex));
  }
  return out;
}

Result<CauseRule> parse_cause_rule(const json& obj, const std::string& where) {
  FP_TRY_STATUS(only_keys(obj, where, KeyWording::KeyList, {"name", "when", "any_of", "names_facts", "cause", "remedy", "comment", "examples",
                                       "counter_examples"}));
  CauseRule r;
  for (const char* key : {"name", "cause", "remedy", "comment"})
    if (!obj.contains(key) || !obj.at(key).is_string() || obj.at(key).get<std::string>().empty())
      return error_at(where, std::string("missing key \"") + key + "\" (a non-empty string)");
  r.name = obj.at("name").get<std::string>();
  r.cause = obj.at("cause").get<std::string>();
  r.remedy = obj.at("remedy").get<std::string>();
  r.comment = obj.at("comment").get<std::string>();
  if (!obj.contains("when") && !obj.contains("any_of")) return error_at(where, "missing key \"when\" (the conditions)");
  if (obj.contains("when")) {
    FP_TRY(r.all, parse_group(obj.at("when"), where + ".when"));
  }
  if (obj.contains("any_of")) {
    const json& a = obj.at("any_of");
    if (!a.is_array() || a.empty()) return error_at(where + ".any_of", "value is not a non-empty list of conditions");
    for (size_t i = 0; i < a.size(); ++i) {
      FP_TRY(ConditionGroup g, parse_group(a[i], where + ".any_of[" + std::to_string(i) + "]"));
      r.any_of.push_back(std::move(g));
    }
  }
  if (obj.contains("names_facts")) {
    FP_TRY(r.names_facts, texts_of(obj.at("names_facts"), where + ".names_facts"));
  }
  FP_TRY(r.examples, parse_examples(obj, "examples", where));
  FP_TRY(r.counter_examples, parse_examples(obj, "counter_examples", where));
  if (r.examples.empty()) return error_at(where + ".examples", "missing: every cause rule needs at least one sample (facts and log lines) that it matches");
  return r;
}

std::optional<double> fact_number(const Facts& f, const std::string& name) {
  auto it = f.find(name);
  if (it == f.end() || it->second.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0') return std::nullopt;
  return v;
}

bool holds(const FactTest& t, const Facts& f) {
  auto it = f.find(t.fact);
  if (it == f.end()) return false;  // an unknown fact proves nothing
  const std::string& v = it->second;
  switch (t.kind) {
    case FactTest::Kind::In: return std::find(t.values.begin(), t.values.end(), v) != t.values.end();
    case FactTest::Kind::NotIn: return std::find(t.values.begin(), t.values.end(), v) == t.values.end();
    case FactTest::Kind::Matches: return regex_search(v, t.regex);
    case FactTest::Kind::Below:
    case FactTest::Kind::AtMost: {
      auto a = fact_number(f, t.fact);
      auto b = t.number ? t.number : fact_number(f, t.other_fact);
      return a && b && (t.kind == FactTest::Kind::Below ? *a < *b : *a <= *b);
    }
    case FactTest::Kind::DiffersFrom: {
      auto o = f.find(t.other_fact);
      return o != f.end() && o->second != v;
    }
    case FactTest::Kind::NotMultipleOf: {  // a fact that is not a whole number proves nothing
      auto a = fact_number(f, t.fact);
      if (!a || *a != static_cast<double>(static_cast<long long>(*a))) return false;
      return static_cast<long long>(*a) % static_cast<long long>(*t.number) != 0;
    }
  }
  return false;
}

// Whether the group holds; the log's captures named by log_facts are added to `facts`.
bool holds(const ConditionGroup& g, Facts& facts, const std::vector<LogRecord>& records) {
  if (!g.log_pattern.empty()) {
    bool found = false;
    RegexMatch m;
    for (const auto& r : records) {
      if (!regex_search(r.text, g.log, m)) continue;
      found = true;
      for (const auto& [fact, idx] : g.log_facts)
        if (m[static_cast<size_t>(idx)].matched) facts[fact] = m.str(static_cast<size_t>(idx));
      break;
    }
    if (!found) return false;
  }
  if (!g.no_log_pattern.empty())
    for (const auto& r : records)
      if (regex_search(r.text, g.no_log)) return false;
  for (const auto& t : g.facts)
    if (!holds(t, facts)) return false;
  return true;
}

std::string fill(std::string text, const Facts& facts) {
  for (size_t at = text.find('{'); at != std::string::npos; at = text.find('{', at + 1)) {
    size_t end = text.find('}', at);
    if (end == std::string::npos) break;
    auto it = facts.find(text.substr(at + 1, end - at - 1));
    if (it == facts.end()) continue;
    text.replace(at, end - at + 1, it->second);
  }
  return text;
}

}  // namespace

std::string fact_label(const std::string& fact) {
  static const std::map<std::string, std::string> labels = {
      {"head_size", "head size"},         {"layers", "layers"},
      {"head_size_v", "V head size"},     {"gqa_ratio", "GQA ratio"},
      {"weights", "weights"},
      {"cache_type_k", "K cache"},        {"cache_type_v", "V cache"},
      {"gpu_layers", "-ngl"},             {"offloaded_layers", "layers offloaded"},
      {"offloadable_layers", "of"},       {"expected_backend", "expected backend"},
      {"compute_capability", "compute capability"}, {"build", "build"},
      {"kv_cache_dtype", "KV cache dtype"}, {"flag", "flag"},
      {"placed_on", "attention placed on"},
  };
  auto it = labels.find(fact);
  if (it != labels.end()) return it->second;
  std::string s = fact;
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

Result<CauseRules> parse_cause_rules(const json& obj, const std::string& where) {
  FP_TRY_STATUS(only_keys(obj, where, KeyWording::KeyList, {"comment", "argv_facts", "argv_defaults", "log_facts", "rules"}));
  CauseRules rules;
  if (obj.contains("argv_facts")) {
    const json& a = obj.at("argv_facts");
    if (!a.is_object()) return error_at(where + ".argv_facts", "value is not an object of fact -> flags");
    for (const auto& [fact, flags] : a.items()) {
      FP_TRY(rules.argv_facts[fact], texts_of(flags, where + ".argv_facts." + fact));
    }
  }
  if (obj.contains("argv_defaults")) {
    const json& d = obj.at("argv_defaults");
    if (!d.is_object()) return error_at(where + ".argv_defaults", "value is not an object of fact -> value");
    for (const auto& [fact, v] : d.items()) {
      FP_TRY(rules.argv_defaults[fact], text_of(v, where + ".argv_defaults." + fact));
    }
  }
  if (obj.contains("log_facts")) {
    const json& l = obj.at("log_facts");
    if (!l.is_object()) return error_at(where + ".log_facts", "value is not an object of fact -> pattern");
    for (const auto& [fact, p] : l.items()) {
      FP_TRY(std::string pattern, text_of(p, where + ".log_facts." + fact));
      FP_TRY(Regex re, compile(pattern, where + ".log_facts." + fact));
      if (re.mark_count() < 1) return error_at(where + ".log_facts." + fact, "pattern " + quote(pattern) + " has no group 1 (the value)");
      rules.log_facts[fact] = re;
      rules.log_fact_patterns[fact] = pattern;
    }
  }
  if (!obj.contains("rules") || !obj.at("rules").is_array()) return error_at(where, "missing key \"rules\" (a list)");
  std::set<std::string> names;
  const json& list = obj.at("rules");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string w = where + ".rules[" + std::to_string(i) + "]";
    FP_TRY(CauseRule r, parse_cause_rule(list[i], w));
    if (!names.insert(r.name).second) return error_at(w + ".name", "duplicate name " + quote(r.name));
    rules.rules.push_back(std::move(r));
  }
  return rules;
}

Facts facts_from_argv(const std::vector<std::string>& argv, const CauseRules& rules) {
  Facts facts;
  for (const auto& [fact, flags] : rules.argv_facts) {
    for (size_t i = 0; i < argv.size(); ++i) {
      for (const auto& flag : flags) {
        if (argv[i] == flag && i + 1 < argv.size()) facts[fact] = argv[i + 1];
        else if (starts_with(argv[i], flag + "=")) facts[fact] = argv[i].substr(flag.size() + 1);
      }
    }
  }
  return facts;
}

Facts gather_facts(const Facts& known, const std::vector<std::string>& argv, const std::vector<LogRecord>& records,
                   const CauseRules& rules) {
  Facts facts = known;
  for (const auto& [k, v] : facts_from_argv(argv, rules)) facts.emplace(k, v);
  add_log_facts(records, rules, facts);
  add_default_facts(rules, facts);
  return facts;
}

void add_default_facts(const CauseRules& rules, Facts& facts) {
  for (const auto& [fact, value] : rules.argv_defaults) facts.emplace(fact, value);
}

void add_log_facts(const std::vector<LogRecord>& records, const CauseRules& rules, Facts& facts) {
  RegexMatch m;
  for (const auto& [fact, re] : rules.log_facts) {
    if (facts.count(fact)) continue;
    std::string value;
    for (const auto& r : records)
      if (regex_search(r.text, re, m) && m[1].matched) value = m.str(1);
    if (!value.empty()) facts[fact] = value;
  }
}

int head_size_from_log(const std::vector<LogRecord>& records, const CauseRules& rules) {
  Facts facts;
  add_log_facts(records, rules, facts);
  const auto it = facts.find("head_size");
  if (it == facts.end() || it->second.empty() || it->second.size() > 5 || it->second.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::stoi(it->second);
}

std::vector<CauseFinding> match_causes(const CauseRules& rules, const Facts& facts_in, const std::vector<LogRecord>& records) {
  std::vector<CauseFinding> out;
  for (const auto& rule : rules.rules) {
    Facts facts = facts_in;
    if (!holds(rule.all, facts, records)) continue;
    if (!rule.any_of.empty() &&
        std::none_of(rule.any_of.begin(), rule.any_of.end(), [&](const ConditionGroup& g) { return holds(g, facts, records); }))
      continue;
    CauseFinding f;
    f.rule = rule.name;
    std::vector<std::string> named;
    for (const auto& name : rule.names_facts) {
      auto it = facts.find(name);
      if (it != facts.end()) named.push_back(fact_label(name) + " " + it->second);
    }
    f.facts = join(named, "; ");
    f.cause = fill(rule.cause, facts);
    f.remedy = fill(rule.remedy, facts);
    out.push_back(std::move(f));
  }
  return out;
}

Result<ConditionGroup> parse_condition_group(const json& obj, const std::string& where) { return parse_group(obj, where); }

Result<std::vector<CauseExample>> parse_cause_examples(const json& obj, const std::string& key, const std::string& where) {
  return parse_examples(obj, key, where);
}

bool condition_holds(const ConditionGroup& g, Facts& facts, const std::vector<LogRecord>& records) {
  return holds(g, facts, records);
}

std::string fill_facts(std::string text, const Facts& facts) { return fill(std::move(text), facts); }

std::string CauseFinding::text() const {
  return (facts.empty() ? std::string() : facts + ": ") + cause + ". Remedy: " + remedy;
}

std::string causes_text(const std::vector<CauseFinding>& findings, const Facts& facts) {
  if (findings.empty()) {
    std::vector<std::string> known;
    for (const auto& [k, v] : facts) known.push_back(fact_label(k) + " " + v);
    return "no known cause (facts: " + (known.empty() ? std::string("none") : join(known, "; ")) + ")";
  }
  std::vector<std::string> texts;
  for (const auto& f : findings) texts.push_back("likely cause: " + f.text());
  return join(texts, " | ");
}

}  // namespace fp
