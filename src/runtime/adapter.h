// What the harness needs to know to drive one runtime (launch, readiness, endpoints, logging
// levels), read from the "adapter" part of src/runtime/data/<runtime>.json: data, not code.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/stream_client.h"
#include "runtime/token_probabilities.h"
#include "util/result.h"

namespace fp {

// The runtime's tokenizer endpoint ("tokenizer" in the runtime data): how flashproof counts a
// prompt's tokens as the runtime will (flow/passes/prompt_tokens.h). POST path with the text in
// text_field (plus text_extra); chat turns either go as they are in chat_messages_field (plus
// chat_extra: vLLM) or are first rendered to text by POST template_path (llama-server
// /apply-template: the turns in template_messages_field, the text back in template_text_field).
// The answer's count_field is an array (its length counts) or a whole number.
struct TokenizerEndpoint {
  std::string path;
  std::string text_field;
  nlohmann::json text_extra = nlohmann::json::object();
  std::string chat_messages_field;
  nlohmann::json chat_extra = nlohmann::json::object();
  std::string template_path, template_messages_field, template_text_field;
  std::string count_field;
};

struct Adapter {
  std::string name;                         // e.g. llama-server
  std::string data_file;
  std::string executable_var;               // env var naming the executable, e.g. FLASHPROOF_LLAMA_SERVER
  std::string executable_name;              // looked up in PATH when nothing else names it
  std::string health_path;                  // 200 when ready
  std::vector<std::string> ready_paths;     // GET in order, each must answer 200 (vLLM: /health then
                                            // /v1/models); key "ready_paths", default {health_path}
  std::string chat_path, completion_path;   // OpenAI-compatible streaming endpoints
  std::vector<std::string> version_args;    // e.g. --version
  std::string version_regex;                // capture 1: the version text to record
  std::string build_regex;                  // capture 1: the build id (for fingerprints)
  std::vector<std::string> timed_args;      // cheap logging that still prints the resolved flag
  std::vector<std::string> evidence_args;   // verbose logging for the evidence pass
  std::map<std::string, std::string> evidence_env;
  // Key "evidence_instruments": how the evidence pass's additions split into instruments it can take
  // off one at a time when a run breaks (flow/passes/instruments.h): scheduler_debug_env, the evidence_env
  // keys that turn on the scheduler's debug output; everything else the adapter adds (evidence_args
  // in place of timed_args, the rest of evidence_env) is verbose logging. The levels each serves
  // ("placement"): the levels lost while it is off. Absent: all of it is verbose logging, serving none.
  std::vector<std::string> scheduler_debug_env;
  std::vector<std::string> scheduler_debug_levels, verbose_logging_levels;
  std::string port_in_use_regex;            // log wording when the port was taken
  std::vector<std::string> list_devices_args;  // prints the devices the runtime sees, e.g. --list-devices;
                                               // empty: it cannot say (key "list_devices_args")
  nlohmann::json request_extras;            // merged into every request body
  // Where the runtime's own timings of a request sit in its stream events (key "server_timings":
  // the event field and the names of prefill time, prompt tokens evaluated, prompt tokens served from
  // its cache, decode time and tokens, and the rates where it states them); absent: the runtime
  // reports none, and the figures made of them (server_prompt_ms, server_tpot_ms, the TTFT split, ...)
  // are not measured. No name is spelled in C++.
  ServerTimingKeys server_timing_keys;
  // Work the runtime logs before a task's prompt, outside its timings (server_timings.log_upkeep):
  // a regex whose first group is milliseconds, and what it is in words. Empty: none known.
  std::string upkeep_log_regex, upkeep_log_what;
  std::optional<TokenizerEndpoint> tokenizer;  // none: prompt tokens are estimated, and the result says so
  // Merged into a request when the case asks for exact output lengths (shape.output_tokens), e.g.
  // {"ignore_eos": true}; empty: the runtime has no way, outputs may stop early, the result says so.
  nlohmann::json exact_output = nlohmann::json::object();
  // Merged into a decode probe (the side-by-side gate, flow/passes/timed_pass.h TimedOptions::
  // decode_probes): the same prompt again, served from the runtime's prompt cache, so that a probe
  // costs its decode and little else (llama-server: {"cache_prompt": true}; an empty object: the
  // runtime caches prompts by itself). None: not known to cache; the gate sends no probes.
  std::optional<nlohmann::json> decode_probe;
  // How to ask for the log-probabilities of an answer's tokens and their top candidates, and where
  // they come back (runtime/token_probabilities.h): the A/B answers pass only. None: the runtime data
  // names no way, and answers that differ between the arms are not classified.
  std::optional<TokenProbabilityKeys> token_probabilities;
  // How the harness sizes the runtime's threads to the CPUs it pins it to (runtime/thread_args.h):
  // threads_args with "{threads}" (llama-server: -t {threads}); threads_options, the options by which
  // a case sets them itself (then left alone). Empty: the runtime sizes its own.
  std::vector<std::string> threads_args, threads_options;
  std::string threads_default = "cpus";  // how many it starts by itself: "cpus" or "physical_cores"
};

Result<Adapter> load_adapter(const std::string& runtime);
Result<Adapter> load_adapter_file(const std::string& path, const std::string& runtime);

}  // namespace fp
