// What the harness knows about its own instruments as data (src/runtime/data/<runtime>.json,
// "evidence.instruments"): the instruments the evidence pass adds to a launch to see better can
// break the run they observe (issue 25: ggml-vulkan's perf logger aborts a partly offloaded run).
//   - last_words: the lines a runtime prints as it dies (ggml's "file:line: GGML_ASSERT(...) failed"),
//     quoted when a run breaks: the runtime's own words, not the harness's guess;
//   - known_breakages: an instrument known to break a configuration, as a rule on the facts known
//     before the launch (the cause rules' conditions, evidence/causes.h): the evidence pass leaves
//     the instrument off there and says why, without launching it.
// Every pattern and rule carries samples it must match and counter-examples it must not; the unit
// tests iterate them. This part opens no file: runtime_signatures.h hands it the JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/causes.h"
#include "util/regex.h"
#include "util/result.h"

namespace fp {

// The instruments by name, in the order the evidence pass takes them off when a run breaks
// (flow/passes/instrument_retry.h): "device_timings", "kernel_probe", "scheduler_debug", "verbose_logging".
const std::vector<std::string>& instrument_names();
// An instrument as people read it: "device timings", "the kernel probe", "scheduler debug", "verbose logging".
std::string instrument_label(const std::string& name);

// One pattern of the runtime's last words.
struct LastWordsRule {
  std::string name, pattern, comment;
  Regex regex;
  std::vector<std::string> examples, counter_examples;
};

// An instrument known to break a configuration.
struct KnownBreakage {
  std::string name;
  std::string instrument;               // one of instrument_names()
  ConditionGroup all;                   // every condition holds (facts only: no log before the launch)
  std::vector<ConditionGroup> any_of;   // and, when not empty, one of these
  std::vector<std::string> names_facts; // the facts the message names, in order
  std::string breaks;                   // what happens, {fact} filled: "... aborts this build when ..."
  std::string runtime_words;            // the runtime's own words where it was seen: a last_words sample
  std::string seen;                     // where and when (machine, driver, build, the recording)
  std::string comment;
  std::vector<CauseExample> examples, counter_examples;
};

struct InstrumentRules {
  std::vector<LastWordsRule> last_words;
  std::vector<KnownBreakage> known_breakages;
};

// Parses "evidence.instruments" (where names it in errors: "file: evidence.instruments").
Result<InstrumentRules> parse_instrument_rules(const nlohmann::json& obj, const std::string& where);

// The runtime's last words in a log: the last line matching a last_words rule (its record prefix
// and surrounding blanks removed), else the last non-empty line; "" for an empty log.
std::string last_words(const std::string& log_text, const InstrumentRules& rules);
// The same from a log file (its last 256 KiB); "" when unreadable.
std::string last_words_of_file(const std::string& path, const InstrumentRules& rules);

// A known breakage that fits the facts (the first in the data file's order for that instrument).
struct BreakageFinding {
  std::string rule;
  std::string instrument;
  std::string facts;  // "-ngl 2; layers 4"
  std::string breaks, runtime_words, seen;
  // "known breakage vulkan_perf_logger_split_graph: build 11669; -ngl 2; layers 4: <breaks> (recorded: "<words>")";
  // where it was seen stays in the data file
  std::string text() const;
};

// Every known breakage whose conditions hold for these facts, in the data file's order.
std::vector<BreakageFinding> match_known_breakages(const InstrumentRules& rules, const Facts& facts);

}  // namespace fp
