// A case file (cases/NAME.json): one deployed model + context shape + job, and everything needed
// to launch it, judge it and time it. Loading validates every field; errors name the file, the
// field, the value and what would be valid.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "case/suite.h"
#include "figure/figure_registry.h"
#include "util/min_effect.h"
#include "util/result.h"

namespace fp {

enum class Job { Chat, Completion, Extraction, Batch };
const char* job_name(Job job);
// The job as the figure registry names it (FigureDef::golden_gated_jobs, paired_gated_jobs).
FigureJob figure_job(Job job);

struct ModelRef {
  std::string path;    // as written: absolute, or relative to the suite root
  // One file: its sha256 (64 lowercase hex digits). A split GGUF (path names its first shard,
  // util/model_files.h): every shard's sha256 in shard order, joined by ",", so that each shard's
  // hash travels with the model's one identity (fingerprint, result, golden).
  std::string sha256;
  std::vector<std::string> shard_sha256;  // one per file, in shard order (one entry for one file)
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
  std::string prompt_set;           // <suite prompts>/<set>/ (case/suite.h); empty with synthetic_prompts
  int max_output_tokens = 0;        // max_tokens of every request ("output_tokens" sets it too)
  std::optional<LongPrompt> long_prompt;
  // Lengths in tokens (docs/workloads.md). prompt_tokens > 0: every prompt is brought to exactly
  // this many prompt tokens as the runtime counts them (its tokenizer endpoint, chat template
  // included), with seeded filler before the last user message. synthetic_prompts > 0: that many
  // seeded prompts of filler alone instead of a prompt set. exact_output: "output_tokens" was
  // given: every answer must be max_output_tokens long (the runtime data's exact_output fields).
  int prompt_tokens = 0;
  int synthetic_prompts = 0;
  bool exact_output = false;
  // prompt_cache: the deployment's clients let the runtime serve a repeated prompt prefix from its
  // prompt cache (the runtime data's decode_probe fields: llama-server {"cache_prompt": true}); off,
  // the default, every timed request has its whole prompt evaluated (request_extras).
  bool prompt_cache = false;
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
  // "degraded": false requires the fused path on the cache's own K/V types (a verdict "active,
  // degraded" fails); true expects it degraded (a known conversion, kept in view); absent: either.
  std::optional<bool> degraded;
};

inline constexpr double kDefaultMinEffect = 0.05;

// Every figure the side-by-side engine measures per launch (flow/paired/paired_runner.h launch_units).
const std::vector<std::string>& paired_figure_names();

struct RunPlan {
  int warmup = 1;
  int repetitions = 3;              // measured rounds over the prompts per launch
  double timeout_s = 300;           // one launch's requests (a run, or one launch of a gate block)
  double ready_timeout_s = 60;      // launch to ready
  double stall_timeout_s = 60;      // a streamed answer with no byte for this long has failed
  // The smallest worsening of a figure worth failing, in the golden comparison and the side-by-side
  // gate alike (figure -> a fraction, e.g. {"ttft_ms": 0.05}, which keeps the figure's default floor,
  // or {"relative": 0.05, "floor": 2} with the floor in the figure's unit); figures not named take
  // the defaults (case/effect_defaults.h). A key applies to the figure of its name and to those
  // starting with it and "_" ("ttft_ms" covers "ttft_ms_p95"; the longest key wins), at every
  // concurrency level ("c4.ttft_ms").
  std::map<std::string, MinEffect> min_effect;
  // Guards (case/effect_defaults.h): figure -> its guard effect (a fraction or {"relative", "floor"}
  // as above), or nullopt for `false`: the figure is not guarded. Figures a user feels that the case
  // does not name keep the default guard. Keys: user_felt_figures().
  std::map<std::string, std::optional<MinEffect>> guards;
  // The side-by-side gate's blocks (flow/paired/paired_runner.h): one fresh launch per arm each, in balanced pairs;
  // the first look after `blocks` (at least 4), then the looks of docs/gate-design.md (6, 8, 12, 16,
  // 24, 32, ... and the budget's last block) until every gated figure is decided, the next look would
  // pass `max_blocks` or `budget_s` (0, the default: the gate's budget in blocks at the block time it
  // measures, flow/paired/paired_runner.h PairedPlan::budget_blocks).
  // The figures the side-by-side gate and A/B gate on; empty: the job's choice
  // (paired_gated_figures). One of paired_figure_names(); an old name reads as what it names today
  // (figure/figure_registry.h gated_figure_name: gpu_kernel_ms -> gpu_kernel_ms_per_token). Naming
  // gpu_kernel_ms_per_token or attention_kernel_ms_per_token adds a probed launch per arm and block,
  // after the timed one (a GPU with the probe), serving the job's load; the timed launches never
  // carry the probe.
  std::vector<std::string> gated;
  int blocks = 4;
  // The default cap: the budget in seconds is what stops a gate (measure/paired_stats.h
  // kDefaultBudgetBlocks, kDefaultBudgetFloorS); this only bounds blocks well under a second.
  int max_blocks = 200;
  double budget_s = 0;
  // Load levels (docs/workloads.md). Each level of `concurrency` is measured on its own, its
  // figures named "c<level>.<figure>"; empty: the job's own way (one request at a time, batch: a
  // round's prompts at once) and figures named as they always were. `requests`: requests per round
  // at each level (0: the level or the number of prompts, whichever is larger). `request_rate`:
  // Poisson arrivals at this many requests per second (0: all at once), the level bounding the
  // requests in flight.
  std::vector<int> concurrency;
  int requests = 0;
  double request_rate = 0;
};

// Latency targets (the optional "targets" block): the result reports the share of requests that
// meet every target and the goodput (requests per second meeting them). Reported, not gated, unless
// `gate`: then goodput_share gates like the job's own figures.
struct Targets {
  std::map<std::string, double> max_ms;  // ttft_ms | tpot_ms | e2e_ms -> at most this many ms
  bool gate = false;
};


// A server that shares the case's card (the "headroom" block's "neighbours"): found running there,
// its memory is already out of the memory left; not running, its memory is reserved from it.
struct NeighbourServer {
  std::string name;     // the case's name for it, unique in the case
  std::string match;    // its process: the command name, or text its command line holds (default: name)
  std::string device;   // where its memory is, as the runtime names it (CUDA0, CPU); default: expect.backend
  double mib = 0;       // the memory it holds when serving, MiB
};

// The optional "headroom" block: the context the case is deployed with, checked against what fits
// beside its neighbours (measure/shared_card.h); a deployed context that does not fit fails the run.
struct HeadroomPlan {
  long deployed_context = 0;  // 0: the cells the runtime ran with
  std::vector<NeighbourServer> neighbours;
};

// What a mechanism statement expects of its figure (flow/ab/mechanism.h).
enum class MechanismExpect { faster, slower, higher, lower, unchanged };
const char* to_string(MechanismExpect e);  // "faster", ... as the case file writes it

// A stated expectation of what the flag does to one A/B figure, checked against the measurement.
struct MechanismStatement {
  std::string figure;        // one of ab_figure_names()
  MechanismExpect expect = MechanismExpect::unchanged;
  double at_least = 0;       // faster/slower/higher/lower: least relative change, e.g. 0.1 = 10%
  double tolerance = 0.05;   // unchanged: largest relative change still called unchanged
};

// The optional "ab" block: how `flashproof ab` runs the case with the flag on and off.
struct AbPlan {
  int repetitions = 5;               // blocks before the first look: one fresh launch per arm each, in balanced pairs
  int rounds = 3;                    // measured rounds over the prompts per launch; default plan.repetitions
  int warmup = 1;                    // warm-up rounds per launch; default plan.warmup
  double sustained_s = 10;           // sustained phase per arm; 0 skips it
  int concurrency = 2;               // concurrent streams in the sustained phase
  std::vector<MechanismStatement> mechanism;
};

// The latency figures a target may name.
const std::vector<std::string>& target_figure_names();

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
  std::optional<Targets> targets;
  std::optional<HeadroomPlan> headroom;  // the "headroom" block
  // The case uses a workload field (token lengths, concurrency levels, a rate or targets): its
  // result has a "workload" part.
  bool has_workload() const;
  // An attached case ("attach" instead of "model", "launch" and "flag"): `flashproof run` only.
  std::optional<Attach> attach;
};

// The smallest worsening of `figure` worth failing: the case's plan.min_effect where a key covers the
// figure, else the defaults (case/effect_defaults.h: 5% with the figure's floor).
MinEffect min_effect(const Case& c, const std::string& figure);
// The case's own plan.min_effect for `figure` (a key covering it); nullopt where the case names none.
std::optional<MinEffect> case_min_effect(const Case& c, const std::string& figure);

// The guard of `figure` (a figure the job does not gate, failed only on a large regression): the
// case's plan.guards where a key covers it (nullopt for `false`), else the default guard of a
// figure a user feels (25% with its floor); nullopt for any other figure. Whether the figure gates
// instead is the caller's to know: a gated figure is never also a guard.
std::optional<MinEffect> guard_effect(const Case& c, const std::string& figure);

// The placeholders a launch argv may use.
const std::vector<std::string>& known_placeholders();

// Loads and validates a case of `suite`: its root anchors relative paths (which may not escape it),
// its prompt folders hold the prompt set.
Result<Case> load_case(const std::string& path, const Suite& suite);
// Same, from the file's text; `path` names the case (its stem must equal "name") and the errors.
Result<Case> parse_case_text(const std::string& text, const std::string& path, const Suite& suite);

}  // namespace fp
