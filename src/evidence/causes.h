// Known causes of a fallback, as data: when fused attention is not running where it was expected,
// which known cause fits the facts the harness holds (the model's head size and layer count, the
// KV cache types and offload flags of the launch, the GPU's compute capability, the build, lines of
// the log), and what to do about it. Rules live in src/runtime/data/<runtime>.json under
// "evidence.causes"; each carries sample facts and log lines that it must match (and
// counter-examples it must not), checked by the unit tests.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/regex.h"
#include "util/result.h"

namespace fp {

struct LogRecord;  // evidence/log_records.h

// Facts by name: "head_size", "layers", "cache_type_k", "cache_type_v", "gpu_layers",
// "expected_backend", "compute_capability", "build", ... Values are text ("48", "q5_1", "8.9").
using Facts = std::map<std::string, std::string>;

// One condition on a fact.
struct FactTest {
  std::string fact;
  enum class Kind { In, NotIn, Matches, Below, AtMost, DiffersFrom, NotMultipleOf } kind = Kind::In;
  std::vector<std::string> values;  // In, NotIn
  Regex regex;                      // Matches
  std::string pattern;
  std::optional<double> number;     // Below or AtMost a number; NotMultipleOf a whole number
  std::string other_fact;           // Below or AtMost another fact, DiffersFrom another fact
};

// All tests of a group hold, and (when given) the log has a record matching `log` and none
// matching `no_log`.
struct ConditionGroup {
  std::vector<FactTest> facts;
  std::string log_pattern, no_log_pattern;
  Regex log, no_log;
  std::map<std::string, int> log_facts;  // fact name -> group of `log` captured into the facts
};

struct CauseExample {
  Facts facts;
  std::vector<std::string> log;
};

struct CauseRule {
  std::string name;
  ConditionGroup all;                 // every condition here holds
  std::vector<ConditionGroup> any_of; // and, when not empty, one of these
  std::vector<std::string> names_facts;  // the facts the message names, in order
  std::string cause, remedy;          // templates: {fact} is replaced by the fact's value
  std::string comment;
  std::vector<CauseExample> examples, counter_examples;
};

struct CauseRules {
  // How the launch line states facts: fact -> flags whose next argument is its value
  // ("cache_type_k": ["-ctk", "--cache-type-k"]).
  std::map<std::string, std::vector<std::string>> argv_facts;
  std::map<std::string, std::string> argv_defaults;  // fact -> value when no flag names it
  // Facts the log states: fact -> pattern, group 1 the value (last match wins).
  std::map<std::string, Regex> log_facts;
  std::map<std::string, std::string> log_fact_patterns;
  std::vector<CauseRule> rules;
};

// Parses the "causes" object (where: "file: evidence.causes" for errors).
Result<CauseRules> parse_cause_rules(const nlohmann::json& obj, const std::string& where);

// The facts a launch line states: each argv_facts flag's next argument ("--flag=value" too).
Facts facts_from_argv(const std::vector<std::string>& argv, const CauseRules& rules);
// The runtime's defaults (argv_defaults) for facts nothing stated; call after the other sources.
void add_default_facts(const CauseRules& rules, Facts& facts);
// The facts the log states (log_facts patterns); added only where `facts` has none yet.
void add_log_facts(const std::vector<LogRecord>& records, const CauseRules& rules, Facts& facts);
// The model's K head size as the log states it (log_facts "head_size": llama-server's print_info line),
// for a run without the model file (attach mode, `explain` without --model); 0 when the log has none.
int head_size_from_log(const std::vector<LogRecord>& records, const CauseRules& rules);

// The facts of one run, from every source in order of trust: `known` (the model's header, the
// expectation, the build), then the launch line, then the log, then the runtime's defaults.
Facts gather_facts(const Facts& known, const std::vector<std::string>& argv, const std::vector<LogRecord>& records,
                   const CauseRules& rules);

// A known cause that fits.
struct CauseFinding {
  std::string rule;
  std::string facts;   // "head size 48; K cache f16"
  std::string cause;
  std::string remedy;
  std::string text() const;  // "head size 48; K cache f16: <cause>. Remedy: <remedy>"
};

// Every rule whose conditions hold, in the data file's order.
std::vector<CauseFinding> match_causes(const CauseRules& rules, const Facts& facts, const std::vector<LogRecord>& records);

// One line for a failure: the findings' texts joined, or "no known cause (facts: ...)".
std::string causes_text(const std::vector<CauseFinding>& findings, const Facts& facts);

// A fact as people read it: "head_size" -> "head size", "cache_type_k" -> "K cache".
std::string fact_label(const std::string& fact);

// The parts of a cause rule that other rules on facts reuse (evidence/instrument_rules.h): one
// condition group ("when", an "any_of" entry; where names it in errors), its samples ("examples",
// "counter_examples" under `key` of obj), whether a group holds (the log's captures named by
// log_facts go into facts), and a template with {fact} filled in.
Result<ConditionGroup> parse_condition_group(const nlohmann::json& obj, const std::string& where);
Result<std::vector<CauseExample>> parse_cause_examples(const nlohmann::json& obj, const std::string& key,
                                                       const std::string& where);
bool condition_holds(const ConditionGroup& g, Facts& facts, const std::vector<LogRecord>& records);
std::string fill_facts(std::string text, const Facts& facts);

}  // namespace fp
