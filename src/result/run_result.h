// Everything one run of a case established, in the order the result file prints it. Filled by the
// flow (evidence, measurement, comparison), read by the report writers: data only.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evidence/verdict_types.h"
#include "golden/kernel_families.h"
#include "golden/threshold_policy.h"
#include "measure/kv_headroom.h"
#include "measure/server_gauges.h"
#include "measure/stats.h"
#include "measure/ttft_split.h"
#include "util/min_effect.h"

namespace fp {

struct FigureResult {
  std::string name;             // unit in the name: ttft_ms, output_tokens_per_s, ...
  std::vector<double> samples;  // every launch's samples together
  Summary summary;              // of `samples`
  bool gate = false;            // the job gates on it
  bool lower_is_better = true;
  std::vector<double> launch_medians;  // the median of each launch's samples: what goldens compare
  // The case's smallest worsening worth failing (plan.min_effect with its floor; relative NaN in a
  // result file that predates it), and the guard of a figure a user feels that the job does not gate.
  MinEffect min_effect{kNoValue, 0};
  std::optional<MinEffect> guard;
};

struct AnswerResult {
  std::string prompt_id;
  std::string text;
  bool stable = true;     // every repetition answered the same
  std::string reference;  // identical | differs | no reference
  std::string diff;       // unified diff when it differs
};

struct RunResult {
  // What ran
  std::string case_name, case_file, job, runtime, description;
  std::string runtime_version, runtime_build, runtime_found_by;
  std::string flashproof_version, started_utc, fingerprint_id, output_dir;
  std::string model_path, model_sha256;
  nlohmann::ordered_json fingerprint;  // the full fingerprint (golden/fingerprint.h)
  std::string flag_value;
  std::vector<std::string> evidence_argv, timed_argv;  // as launched (the port, the model's full path)
  std::map<std::string, std::string> evidence_env;
  // The same launch lines with placeholders, as result.txt prints them: {port}, {suite}, the model as
  // the case wrote it (flow/passes/case_context.h shown_launch). Empty in result files older than these.
  std::vector<std::string> evidence_line, timed_line;
  std::string suite_root;  // result.txt writes this folder as {suite}
  std::string model_file;  // the model file opened (model_path resolved)
  bool expect_fused = true;
  std::string expect_backend;
  // An attached server (case "attach"): its endpoint, where its log came from ("none"), notes on the
  // log; empty when flashproof launched the runtime. Cold start is then not measured.
  std::string attached, attached_log;
  std::vector<std::string> attached_notes;

  // Evidence
  RunVerdict verdict;                           // typed; the report writers make its words
  std::vector<std::string> verdict_causes;      // when not as expected: known causes with remedies (evidence/causes.h)
  std::vector<std::string> signal_mismatches;   // timed run vs evidence pass
  std::string evidence_signals, timed_signals;  // e.g. "flash attention enabled; splits 1"
  std::string evidence_load;                    // the requests the evidence pass sent: "4 requests at once (...)"
  std::string probed_check = "not run";         // flow/passes/probed_check.h: the kernel set of the timed configuration
  // The evidence pass's instruments (flow/passes/instruments.h): on in the launch the verdict read ("device
  // timings (GGML_VK_PERF_LOGGER=1)"), taken off with why, the extra launches finding out cost and
  // what each showed (flow/passes/instrument_retry.h).
  std::vector<std::string> instruments_on, instruments_off, instrument_retry_steps;
  int instrument_extra_launches = 0;
  bool instruments_known = false;  // the evidence pass ran to a verdict: the fields above are its (else not written)
  // Attention kernels by family, one share per probed launch (golden/kernel_families.h); empty where
  // no kernel probe ran. kernel_launches names each launch ("evidence pass", "probed check 1", ...).
  std::vector<FamilySamples> kernel_families;
  std::vector<std::string> kernel_launches;

  // Timing
  int launches = 1;  // fresh launches of the timed runs (each a cold start)
  double cold_ready_ms = -1, cold_first_ttft_ms = -1, cold_first_e2e_ms = -1;
  std::vector<FigureResult> figures;
  std::string fidelity;                       // client vs server prompt timing, in words
  TtftSplit ttft_split;                       // what TTFT is made of, from the runtime's own timings (measure/ttft_split.h)
  std::optional<ServerGauges> server_gauges;  // the runtime's own metrics over the timed runs (all launches)
  // The workload a case with workload fields asked for and got (flow/passes/workload_summary.h): key
  // (printed as "workload.<key>") and value, in order; empty for other cases.
  std::vector<std::pair<std::string, std::string>> workload;

  // Memory
  std::optional<double> kv_cache_mib;
  std::optional<long long> kv_cache_tokens;  // KV capacity the runtime states in tokens (vLLM)
  std::map<std::string, double> kv_mib_by_device, compute_mib_by_device;
  std::optional<double> peak_rss_mib;
  std::string gpu_memory = "not measured";
  // Headroom (measure/kv_headroom.h): KV bytes per token from the model and the cache types, checked
  // against the runtime's KV buffers; memory left while it served; the context that would still fit.
  std::optional<Headroom> headroom;
  std::string headroom_why_not = "no timed launch was measured";

  // Answers and goldens
  std::vector<AnswerResult> answers;
  std::string golden_dir, golden_status;  // golden_status (timing figures): compared | recorded |
                                          // not compared | missing | unreadable
  std::vector<std::string> golden_lines;
  // Each figure's comparison with its golden, typed (flow/case_run/golden_check.h; golden_lines puts
  // them in words). In memory only: the result files write golden_lines.
  struct GoldenFigure {
    std::string name;
    FigureStatus status = FigureStatus::pass;
    // The threshold rule's own status (golden/threshold_policy.h ChangeJudgement::status): a
    // regression that BUSIER, SLOWER MACHINE or OTHER MACHINE set aside is within_noise in `status`
    // and regressed here.
    FigureStatus judged = FigureStatus::pass;
    bool gate = false, guard = false, memory = false;
    double worse_by = kNoValue;  // > 0: worse, in the figure's unit (ChangeJudgement::worse_by)
  };
  std::vector<GoldenFigure> golden_figures;

  // Text from outside that was not UTF-8 (util/utf8.h): bytes replaced by U+FFFD, by source (a
  // runtime log's path, "HTTP response bodies"), so that a quote with a U+FFFD says where it came from.
  std::map<std::string, size_t> not_utf8;

  // Outcome
  bool complete = false;
  std::vector<std::string> failures;
  std::string status() const { return !complete ? "incomplete" : failures.empty() ? "pass" : "fail"; }
};

}  // namespace fp
