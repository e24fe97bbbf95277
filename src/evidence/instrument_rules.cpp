#include "evidence/instrument_rules.h"

#include <algorithm>
#include <set>

#include "evidence/log_records.h"
#include "util/json_fields.h"
#include "util/text.h"

namespace fp {
namespace {

using nlohmann::json;

Result<std::string> text(const json& obj, const std::string& key, const std::string& where, bool required = true) {
  if (!obj.contains(key)) {
    if (required) return error_at(where, "missing key " + quote(key) + " (a non-empty string)");
    return std::string();
  }
  const json& v = obj.at(key);
  if (!v.is_string() || (required && v.get<std::string>().empty()))
    return error_at(where + "." + key, "value " + quote(v.dump()) + " is not a non-empty string");
  return v.get<std::string>();
}

Result<std::vector<std::string>> texts(const json& obj, const std::string& key, const std::string& where) {
  std::vector<std::string> out;
  if (!obj.contains(key)) return out;
  const json& v = obj.at(key);
  if (!v.is_array()) return error_at(where + "." + key, "value " + quote(v.dump()) + " is not a list of strings");
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return error_at(where + "." + key + "[" + std::to_string(i) + "]", "value " + quote(v[i].dump()) + " is not a string");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Result<LastWordsRule> parse_last_words(const json& obj, const std::string& where) {
  FP_TRY_STATUS(only_keys(obj, where, KeyWording::KeyList, {"name", "pattern", "comment", "examples", "counter_examples"}));
  LastWordsRule r;
  FP_TRY(r.name, text(obj, "name", where));
  FP_TRY(r.pattern, text(obj, "pattern", where));
  FP_TRY(r.comment, text(obj, "comment", where));
  auto re = Regex::compile(r.pattern);
  if (!re) return error_at(where + ".pattern", "value " + quote(r.pattern) + " is " + re.error().message);
  r.regex = std::move(*re);
  FP_TRY(r.examples, texts(obj, "examples", where));
  FP_TRY(r.counter_examples, texts(obj, "counter_examples", where));
  if (r.examples.empty()) return error_at(where + ".examples", "missing: every pattern needs at least one sample line that it matches");
  return r;
}

Result<KnownBreakage> parse_breakage(const json& obj, const std::string& where) {
  FP_TRY_STATUS(only_keys(obj, where, KeyWording::KeyList, {"name", "instrument", "when", "any_of", "names_facts", "breaks", "runtime_words",
                                       "seen", "comment", "examples", "counter_examples"}));
  KnownBreakage b;
  FP_TRY(b.name, text(obj, "name", where));
  FP_TRY(b.instrument, text(obj, "instrument", where));
  const auto& names = instrument_names();
  if (std::find(names.begin(), names.end(), b.instrument) == names.end())
    return error_at(where + ".instrument", "value " + quote(b.instrument) + " is not an instrument; valid: " + join(names, ", "));
  FP_TRY(b.breaks, text(obj, "breaks", where));
  FP_TRY(b.runtime_words, text(obj, "runtime_words", where));
  FP_TRY(b.seen, text(obj, "seen", where));
  FP_TRY(b.comment, text(obj, "comment", where));
  if (!obj.contains("when")) return error_at(where, "missing key \"when\" (the conditions, on facts known before the launch)");
  FP_TRY(b.all, parse_condition_group(obj.at("when"), where + ".when"));
  if (obj.contains("any_of")) {
    const json& a = obj.at("any_of");
    if (!a.is_array() || a.empty()) return error_at(where + ".any_of", "value is not a non-empty list of conditions");
    for (size_t i = 0; i < a.size(); ++i) {
      FP_TRY(ConditionGroup g, parse_condition_group(a[i], where + ".any_of[" + std::to_string(i) + "]"));
      b.any_of.push_back(std::move(g));
    }
  }
  // Known before the launch: the model's header, the launch line, the expectation, the build. A
  // condition on the log could never hold where the rule is used.
  for (const ConditionGroup* g : [&] {
         std::vector<const ConditionGroup*> all{&b.all};
         for (const auto& a : b.any_of) all.push_back(&a);
         return all;
       }())
    if (!g->log_pattern.empty() || !g->no_log_pattern.empty())
      return error_at(where, "conditions on the log (\"log\", \"no_log\") cannot hold: the rule decides before the launch");
  FP_TRY(b.names_facts, texts(obj, "names_facts", where));
  FP_TRY(b.examples, parse_cause_examples(obj, "examples", where));
  FP_TRY(b.counter_examples, parse_cause_examples(obj, "counter_examples", where));
  if (b.examples.empty()) return error_at(where + ".examples", "missing: every known breakage needs at least one sample (facts) that it matches");
  return b;
}

}  // namespace

const std::vector<std::string>& instrument_names() {
  static const std::vector<std::string> names = {"device_timings", "kernel_probe", "scheduler_debug", "verbose_logging"};
  return names;
}

std::string instrument_label(const std::string& name) {
  if (name == "device_timings") return "device timings";
  if (name == "kernel_probe") return "the kernel probe";
  if (name == "scheduler_debug") return "scheduler debug";
  if (name == "verbose_logging") return "verbose logging";
  return name;
}

Result<InstrumentRules> parse_instrument_rules(const json& obj, const std::string& where) {
  FP_TRY_STATUS(only_keys(obj, where, KeyWording::KeyList, {"comment", "last_words", "known_breakages"}));
  InstrumentRules rules;
  std::set<std::string> seen;
  for (const char* key : {"last_words", "known_breakages"}) {
    if (!obj.contains(key)) continue;
    const json& list = obj.at(key);
    if (!list.is_array()) return error_at(where + "." + key, "value is not a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string w = where + "." + key + "[" + std::to_string(i) + "]";
      std::string name;
      if (std::string(key) == "last_words") {
        FP_TRY(LastWordsRule r, parse_last_words(list[i], w));
        name = r.name;
        rules.last_words.push_back(std::move(r));
      } else {
        FP_TRY(KnownBreakage b, parse_breakage(list[i], w));
        name = b.name;
        rules.known_breakages.push_back(std::move(b));
      }
      if (!seen.insert(name).second) return error_at(w + ".name", "duplicate name " + quote(name));
    }
  }
  // A known breakage quotes the runtime's words as recorded: one of the last_words patterns must
  // find them, or a report of the same breakage live would quote something else.
  for (size_t i = 0; i < rules.known_breakages.size(); ++i) {
    const KnownBreakage& b = rules.known_breakages[i];
    const std::string words = trim(b.runtime_words);
    const bool found = std::any_of(rules.last_words.begin(), rules.last_words.end(), [&](const LastWordsRule& r) {
      RegexMatch m;
      return regex_search(words, r.regex, m) && m.str(0) == words;
    });
    if (!found)
      return error_at(where + ".known_breakages[" + std::to_string(i) + "].runtime_words",
                 "value " + quote(b.runtime_words) + " is not matched by any last_words pattern (" +
                     std::to_string(rules.last_words.size()) + " patterns)");
  }
  return rules;
}

std::string last_words(const std::string& log_text, const InstrumentRules& rules) {
  std::string matched, last;
  for (const std::string& raw : split_lines(log_text)) {
    const std::string line = trim(raw);
    if (line.empty()) continue;
    last = line;
    for (const auto& r : rules.last_words) {
      RegexMatch m;
      if (regex_search(line, r.regex, m)) {
        matched = m.str(0);
        break;
      }
    }
  }
  return matched.empty() ? last.substr(0, 400) : trim(matched);
}

std::string last_words_of_file(const std::string& path, const InstrumentRules& rules) {
  auto text = read_file(path);
  if (!text) return "";
  constexpr size_t kTail = 256 * 1024;
  return last_words(text->size() > kTail ? text->substr(text->size() - kTail) : *text, rules);
}

std::vector<BreakageFinding> match_known_breakages(const InstrumentRules& rules, const Facts& facts_in) {
  std::vector<BreakageFinding> out;
  for (const auto& b : rules.known_breakages) {
    Facts facts = facts_in;
    if (!condition_holds(b.all, facts, {})) continue;
    if (!b.any_of.empty() &&
        std::none_of(b.any_of.begin(), b.any_of.end(), [&](const ConditionGroup& g) { return condition_holds(g, facts, {}); }))
      continue;
    BreakageFinding f;
    f.rule = b.name;
    f.instrument = b.instrument;
    std::vector<std::string> named;
    for (const auto& name : b.names_facts) {
      auto it = facts.find(name);
      if (it != facts.end()) named.push_back(fact_label(name) + " " + it->second);
    }
    f.facts = join(named, "; ");
    f.breaks = fill_facts(b.breaks, facts);
    f.runtime_words = b.runtime_words;
    f.seen = b.seen;
    out.push_back(std::move(f));
  }
  return out;
}

std::string BreakageFinding::text() const {
  return "known breakage " + rule + ": " + (facts.empty() ? std::string() : facts + ": ") + breaks + " (recorded: " +
         quote(runtime_words) + ")";
}

}  // namespace fp
