// Every figure flashproof measures, in one table: its name, unit, direction, floor (and why),
// whether a user feels it, where it comes from, whether the machine-speed term applies to it, which
// engines measure it, and for a figure of one request its extractor. Every engine reads it: the
// golden path (flow/passes/figures.h), the side-by-side engine (flow/paired/paired_runner.h), A/B,
// the case file's validation (case/case_file.h) and the timing policy's defaults
// (case/effect_defaults.h). Two definitions never share a name. A new figure is one entry here and
// its test (figure_registry_test.cpp); the engine that measures it lists it by its flag.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp {

// Where a figure's values come from.
enum class FigureSource {
  request,          // one value per measured request, from the client's clock (its extractor)
  runtime_timings,  // one value per measured request, from the runtime's own timings (runtime data "timings")
  round,            // one value per round of requests (a percentile, a rate over the round's wall time)
  launch,           // one value per launch (cold start, a launch's decode unit)
  probe,            // one value per probed launch: the kernels the GPU ran (CUPTI or the backend's own timings)
  sustained,        // the A/B sustained phase
  memory,           // the runtime's buffers and peaks
};

// The jobs of a case (case/case_file.h Job, case/case_file.h figure_job), as bits of
// FigureDef::golden_gated_jobs and paired_gated_jobs.
enum FigureJob : unsigned {
  kChatJob = 1u << 0,
  kCompletionJob = 1u << 1,
  kExtractionJob = 1u << 2,
  kBatchJob = 1u << 3,
};

// A sitting's spread where the registry has no measurement of its own: host-clock TTFT's
// (bench/calibration.md).
inline constexpr double kDefaultSittingSigma = 0.10;

// The engines that measure a figure (FigureDef::engines, a set of these bits).
enum FigureEngine : unsigned {
  kGoldenEngine = 1u << 0,  // a case run: result files and goldens (flow/passes/figures.h compute_figures)
  kPairedEngine = 1u << 1,  // the side-by-side engine: the gate and A/B's gates (paired_runner.h launch_units)
  kAbEngine = 1u << 2,      // A/B's figure table and its mechanism statements (case/case_file.h ab_figure_names)
};

// One measured request as the extractors read it: the client's clock and the runtime's own
// timings (named by the runtime data: runtime/adapter.h Adapter::timings), nothing else.
struct RequestFacts {
  double ttft_s = -1;            // < 0: not measured
  double e2e_s = -1;             // < 0: not measured
  std::optional<double> tpot_s;  // client/stream_metrics.h tpot_s
  int prompt_tokens = -1, completion_tokens = -1;
  double runtime_cpu_s = -1;          // < 0: not measured
  std::vector<double> event_times_s;  // each streamed content event
  std::vector<double> gaps_s;         // between consecutive content events (client/stream_metrics.h)
  // The runtime's own timings (NaN: not reported).
  double server_prompt_ms = std::numeric_limits<double>::quiet_NaN();
  double server_decode_ms = std::numeric_limits<double>::quiet_NaN();
  double server_decode_tokens = std::numeric_limits<double>::quiet_NaN();
};

// One round of requests: its requests and its wall time where measured (concurrent rounds; <= 0: none).
struct RoundFacts {
  std::vector<const RequestFacts*> requests;
  double wall_s = 0;
};

// One launch: its cold start, its measured requests and its decode probes (flow/passes/timed_pass.h).
struct LaunchFacts {
  double ready_s = 0;
  double cold_first_ttft_s = -1, cold_first_e2e_s = -1;
  std::vector<RequestFacts> requests, probes;
};

// The extractors: a request's values of the figure (appended to `out`; none where the request does
// not measure it), a round's value, a launch's value.
using RequestExtractor = void (*)(const RequestFacts&, std::vector<double>& out);
using RoundExtractor = std::optional<double> (*)(const RoundFacts&);
using LaunchExtractor = std::optional<double> (*)(const LaunchFacts&);

struct FigureDef {
  std::string_view name;
  std::string_view unit;  // "ms", "tokens/s", "requests/s", "share", "MiB"
  bool lower_is_better = true;
  // The smallest change worth failing, in the unit (util/min_effect.h MinEffect::floor); 0: none.
  double floor = 0;
  std::string_view floor_why;
  bool user_felt = false;  // guarded where the job does not gate it (case/effect_defaults.h)
  FigureSource source = FigureSource::request;
  // The side-by-side gate reports the launches' machine-speed reference beside the figure
  // (measure/paired_stats.h PairedEstimate::machine_log): the host's speed moves it. Not for what the
  // GPU's clocks time.
  bool machine_reference = true;
  unsigned engines = 0;  // FigureEngine bits
  // A case may name it in plan.gated (a side-by-side figure); false for a figure the engine measures
  // only to guard another (itl_requests_ms).
  bool gateable = true;
  // At most one extractor; none where the figure is measured elsewhere (probe, sustained, memory,
  // and the figures of load levels and targets: flow/passes/figures.h).
  RequestExtractor per_request = nullptr;
  RoundExtractor per_round = nullptr;
  LaunchExtractor per_launch = nullptr;
  std::string_view definition;  // one line, for the docs and the reader
  // The golden path's figure for this one where the golden path measures it another way
  // (itl_mean_ms, per launch -> itl_ms, every gap pooled); empty: the same name.
  std::string_view golden_name;
  // The name this figure was recorded under before it got its own (itl_mean_ms was the side-by-side
  // engine's itl_ms; gpu_kernel_ms_per_launch was gpu_kernel_ms): still read in gate.json and case
  // files (plan.gated, plan.min_effect, plan.guards), with this definition.
  std::string_view old_name;
  // For a figure no engine measures any more (engines 0), what a case that names it (plan.gated, the
  // gate's --min-effect) gets instead: gpu_kernel_ms_per_launch -> gpu_kernel_ms_per_token. A
  // recorded gate.json keeps the old figure under its own definition (paired_figure_name).
  std::string_view replaced_by;
  // The jobs that gate on it without a plan.gated of their own (FigureJob bits): in the golden path
  // (flow/passes/figures.h) and in the side-by-side gate (flow/passes/gated_figures.h).
  unsigned golden_gated_jobs = 0, paired_gated_jobs = 0;
  // The golden path's sitting-to-sitting spread (golden/noise_band.h): the sd of a sitting's offset,
  // as a fraction of the median; on the golden's own GPU where it was measured there (figures the
  // GPU's clocks time), with the degrees of freedom that measurement is worth beside the nights (0:
  // a cap, not a measurement). How each was measured: bench/calibration.md.
  double sitting_sigma = kDefaultSittingSigma;
  double sitting_sigma_same_gpu = kDefaultSittingSigma;
  double sitting_prior_df_same_gpu = 0;
};

// Every figure, in the order result files, A/B tables and lists of names show them.
const std::vector<FigureDef>& figure_registry();

// "c4.ttft_ms" -> "ttft_ms": a concurrency level's figure is its figure's.
std::string base_figure_name(const std::string& figure);

// The entry of `figure` (its base name; a side-by-side figure's old name where `paired` is true);
// nullptr for a name the registry does not hold
// ("memory.*" figures, "c<level>." prefixes stripped first).
const FigureDef* figure_def(const std::string& figure);
// The side-by-side engine's name for `figure` as gate.json recorded it: its own, or the figure of the
// same definition that had it as its old name (itl_ms -> itl_mean_ms, gpu_kernel_ms ->
// gpu_kernel_ms_per_launch).
std::string paired_figure_name(const std::string& figure);
// What a case naming `figure` (plan.gated, the gate's --min-effect) gates today: paired_figure_name,
// then the figure that replaced it where no engine measures it any more (gpu_kernel_ms ->
// gpu_kernel_ms_per_launch -> gpu_kernel_ms_per_token).
std::string gated_figure_name(const std::string& figure);

// Whether a larger value of `figure` is worse: its entry says so; a name the registry does not hold
// (memory, load) goes downward.
bool figure_lower_is_better(const std::string& figure);

// The names of the figures an engine measures, in registry order (kPairedEngine: those a case may
// gate on, FigureDef::gateable).
std::vector<std::string> figure_names(FigureEngine engine);

// The figures jobs of `job` (a FigureJob bit) gate on in `engine` (kGoldenEngine or kPairedEngine:
// FigureDef::golden_gated_jobs, paired_gated_jobs), in registry order.
std::vector<std::string> job_gated_figures(FigureEngine engine, unsigned job);

// The user-felt figures, in registry order.
std::vector<std::string> user_felt_figure_names();

}  // namespace fp
