// How a runtime's launch line sizes the attention node and which ggml library it links: the
// "support" section of src/runtime/data/<runtime>.json, for `flashproof support`. Data, not code:
// another llama.cpp-based runtime is one section.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

struct SupportRules {
  std::string data_file;
  std::string library;                              // soname prefix of ggml, e.g. libggml.so
  std::vector<std::string> ubatch_options, batch_options, parallel_options;
  int ubatch_default = 512, batch_default = 2048;
  std::vector<std::string> parallel_auto;           // values of the parallel option meaning "auto"
  std::vector<std::string> unified_on, unified_off;  // flags that share one KV buffer among slots, or not
  std::string f32_cast_to;                          // the type an f32 K/V is cast to before the node; "" none
};

// Parses the "support" section of a runtime data file's text; errors name the file and the field.
Result<SupportRules> parse_support_rules(const std::string& text, const std::string& path);
// The same for the runtime's data file (runtime/runtime_data.h); an error when it has no section.
Result<SupportRules> load_support_rules(const std::string& runtime);

// The batch a launch line computes: `ubatch` tokens per prefill step (min of -ub and -b), and for
// decode with several slots, `slots` sequences each in its own KV stream (0 when they share one
// buffer, or when there is one slot).
struct LaunchBatch {
  int ubatch = 512;
  int slots = 1;
  bool separate_streams = false;
};
// From an argv (the last occurrence of an option wins; "--opt=value" too). A value that is not a
// whole number >= 1 is an error naming the option and the value.
Result<LaunchBatch> launch_batch(const std::vector<std::string>& argv, const SupportRules& rules);

}  // namespace fp
