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
  // optional: the name requests carry in their "model" field; empty: the launch's alias, else the
  // file's name (runtime/launch_line.h served_model_name)
  std::string served_name;
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

// A server that something else started (systemd, a container, Kubernetes): flashproof sends its
// requests to the endpoint as it is, launches nothing, and reads evidence from the server's log as
// it grows from the run's start (a file it follows, or a command's output).
struct Attach {
  std::string endpoint;                  // base URL, e.g. http://127.0.0.1:8080 (no trailing '/')
  std::string model;                     // the requests' "model" field
  std::string api_key_env;               // variable holding the API key, read at run time; "" none
  std::string log_file;                  // the server's log file, followed from the run's start
  std::vector<std::string> log_command;  // or a command printing the log (journalctl -fu ...), no shell
};

struct Expectation {
  bool fused_attention = true;
  std::string backend;              // as written, comma-joined: CPU, CUDA0, "CUDA0,CUDA1", all-gpus
  std::vector<std::string> backends;  // the list: each must run the fused op, no other may
  // Evidence levels that must yield an answer ("log", "placement", "kernels"); empty: every level
  // the platform can produce (evidence/verdict.h default_evidence_levels).
  std::vector<std::string> evidence;
};

inline constexpr double kDefaultMinEffect = 0.05;

struct RunPlan {
  int warmup = 1;
  int repetitions = 3;              // measured rounds over the prompts per launch
  double timeout_s = 300;           // one launch's requests (a run, or one launch of a gate block)
  double ready_timeout_s = 60;      // launch to ready
  double stall_timeout_s = 60;      // a streamed answer with no byte for this long has failed
  // The side-by-side gate (flow/paired_runner.h): the smallest relative worsening of a gated figure
  // worth failing (figure -> fraction, e.g. {"ttft_ms": 0.05}); figures not named take the job's
  // default (default_min_effect). Blocks: one fresh launch per arm each, ABBA order; the first look
  // after `blocks`, then one more block pair at a time until every gated figure is decided, the
  // blocks reach `max_blocks` or the timed blocks would pass `budget_s`.
  std::map<std::string, double> min_effect;
  int blocks = 4;
  int max_blocks = 40;
  double budget_s = 300;
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
  int repetitions = 5;               // blocks before the first look: one fresh launch per arm each, ABBA order
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
  // An attached case ("attach" instead of "model", "launch" and "flag"): `flashproof run` only.
  std::optional<Attach> attach;
};

// The smallest relative worsening of `figure` worth failing for the job: 5% for the gated timing
// figures unless the case's plan.min_effect names the figure.
double min_effect(const Case& c, const std::string& figure);

// The placeholders a launch argv may use.
const std::vector<std::string>& known_placeholders();

// Loads and validates a case. `repo_root` anchors relative paths; paths may not escape it.
Result<Case> load_case(const std::string& path, const std::string& repo_root);
// Same, from the file's text; `path` names the case (its stem must equal "name") and the errors.
Result<Case> parse_case_text(const std::string& text, const std::string& path, const std::string& repo_root);

}  // namespace fp
