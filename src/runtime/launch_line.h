// How a runtime's command line says things, read from the "launch_line" part of
// src/runtime/data/<runtime>.json: which options carry the values a case's placeholders stand for,
// which option names the model the server answers to (the requests' "model" field), which say where
// layers run, and which options an operator's command may carry that a case must not. Data, not
// code: `flashproof new-case` and the request builder read it; nothing here knows a runtime.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace fp {

// An option the case leaves out of the operator's command, and why.
struct DroppedOption {
  std::vector<std::string> names;  // e.g. {"--log-file"}
  bool takes_value = false;
  std::string why;
};

// The options that decide where the layers run (expect.backend).
struct OffloadOptions {
  std::vector<std::string> gpu_layers;        // -ngl: how many layers go to the GPU
  std::string gpu_layers_default;             // the runtime's default when no option says ("auto")
  std::vector<std::string> all_layers;        // values meaning every layer (that fits): "auto", "all"
  std::vector<std::string> device;            // -dev: the devices to offload to, comma-separated
  std::vector<std::string> no_device;         // device values meaning none: "none"
  std::vector<std::string> split_mode;        // -sm
  std::vector<std::string> attention_on_main_gpu;  // split modes that keep attention on the -mg GPU: "none", "row"
  std::vector<std::string> main_gpu;          // -mg: that GPU's index among the devices
};

struct LaunchLine {
  std::string runtime, file;
  // placeholder ("model", "port", ...) -> the options whose value it stands for
  std::map<std::string, std::vector<std::string>> placeholders;
  // placeholder -> arguments appended when the command has none of its options, e.g. {"--port", "{port}"}
  std::map<std::string, std::vector<std::string>> added_when_missing;
  std::string flag_on, flag_off, flag_default;  // the fused-attention flag's values; its default
  std::string context_default;                  // the context when no option says ("0")
  std::vector<std::string> context_from_model;  // context values meaning "the model's trained context"
  std::vector<std::string> served_model_options;  // e.g. -a/--alias (a comma list: the first name)
  // Without such an option the server answers to: "file_name" (the model file's name) or
  // "model_argument" (the model option's value as given).
  std::string served_model_default = "file_name";
  std::vector<DroppedOption> dropped;
  std::map<std::string, std::string> refused;  // option -> why a case cannot be made from it
  OffloadOptions offload;
};

// Parses the "launch_line" object of the data file `file` (errors: FILE: field "launch_line.KEY").
Result<LaunchLine> parse_launch_line(const nlohmann::json& obj, const std::string& file);
// The runtime's launch_line, from its data file; an error when the file has none.
Result<LaunchLine> load_launch_line(const std::string& runtime);

// One option found in an argv: its index, the option as written and its value ("--port=8080" too).
struct OptionValue {
  size_t index = 0;           // of the option
  std::string option, value;
  bool inline_value = false;  // --opt=value: one argument
};

// The last occurrence of any of `names` (a later option overrides an earlier one, as the runtimes'
// parsers do) with its value; none when absent or when the value is missing.
std::optional<OptionValue> find_option(const std::vector<std::string>& argv, const std::vector<std::string>& names);

// The name requests carry in their "model" field for a launched server: the first name of the
// served-model option, else (by served_model_default) the model file's name or the model argument.
// `rules` may be null (the runtime data has no launch_line): the file's name.
std::string served_model_name(const LaunchLine* rules, const std::vector<std::string>& expanded_argv,
                              const std::string& model_path);

}  // namespace fp
