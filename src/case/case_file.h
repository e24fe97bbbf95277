// A case file (cases/NAME.json): one deployed model + context shape + job, and everything needed
// to launch it, judge it and time it. Loading validates every field; errors name the file, the
// field, the value and what would be valid.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

enum class Job { Chat, Completion, Extraction, Batch };
const char* job_name(Job job);

struct ModelRef {
  std::string path;    // as written, relative to the repository root
  std::string sha256;  // 64 lowercase hex digits
  std::string recipe;  // optional: fixtures/models/<name>.json that generates it
};

struct LongPrompt {
  std::string document;  // fixtures/prompts/documents/<name>.txt
  size_t chars = 0;      // the document is repeated (whole words) to this many characters
};

struct Shape {
  int context = 0;
  std::string prompt_set;           // fixtures/prompts/<set>/
  int max_output_tokens = 0;
  std::optional<LongPrompt> long_prompt;
};

struct Launch {
  std::vector<std::string> argv;    // with placeholders, e.g. {model} {port} {flag}
  std::map<std::string, std::string> env;
};

struct FlagValues {
  std::string on, off;
  bool use_on = true;               // which value this case's run launches with
  const std::string& used() const { return use_on ? on : off; }
};

struct Expectation {
  bool fused_attention = true;
  std::string backend;              // e.g. CPU, CUDA0
};

struct RunPlan {
  int warmup = 1;
  int repetitions = 3;
  double timeout_s = 300;           // the whole case
  double ready_timeout_s = 60;      // launch to ready
  double stall_timeout_s = 60;      // a streamed answer with no byte for this long has failed
};

// A stated expectation of what the flag does to one A/B figure, checked against the measurement.
struct MechanismStatement {
  std::string figure;        // one of ab_figure_names()
  std::string expect;        // faster | slower | higher | lower | unchanged
  double at_least = 0;       // faster/slower/higher/lower: least relative change, e.g. 0.1 = 10%
  double tolerance = 0.05;   // unchanged: largest relative change still called unchanged
};

// The optional "ab" block: how `flashproof ab` runs the case with the flag on and off.
struct AbPlan {
  int repetitions = 5;               // fresh launches per arm, alternating on, off, on, off ...
  int rounds = 3;                    // measured rounds over the prompts per launch; default plan.repetitions
  int warmup = 1;                    // warm-up rounds per launch; default plan.warmup
  double sustained_s = 10;           // sustained phase per arm; 0 skips it
  int concurrency = 2;               // concurrent streams in the sustained phase
  std::vector<MechanismStatement> mechanism;
};

// The figures an A/B run compares (names a mechanism statement may use).
const std::vector<std::string>& ab_figure_names();

struct Case {
  std::string file;                 // path it was loaded from
  std::string name;                 // equals the file's stem
  std::string description;
  Job job = Job::Chat;
  std::string runtime;              // adapter / runtime data name, e.g. llama-server
  ModelRef model;
  Shape shape;
  Launch launch;
  FlagValues flag;
  Expectation expect;
  RunPlan plan;
  int seed = 42;
  std::vector<std::string> labels;  // extra CTest labels
  bool self_test = false;           // has a "ctest" block: flashproof must fail it (CMake reads it)
  AbPlan ab;                        // the "ab" block, or its defaults
  bool has_ab = false;              // the case has an "ab" block
};

// The placeholders a launch argv may use.
const std::vector<std::string>& known_placeholders();

// Loads and validates a case. `repo_root` anchors relative paths; paths may not escape it.
Result<Case> load_case(const std::string& path, const std::string& repo_root);
// Same, from the file's text; `path` names the case (its stem must equal "name") and the errors.
Result<Case> parse_case_text(const std::string& text, const std::string& path, const std::string& repo_root);

}  // namespace fp
