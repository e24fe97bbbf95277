// What every pass of one case run shares: the case and what was resolved from it (CaseContext, not
// edited for a launch), and where and how one launch of it runs (LaunchPlacement, built per launch).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "case/prompt_set.h"
#include "case/suite.h"
#include "evidence/runtime_signatures.h"
#include "flow/passes/gpu_machine.h"
#include "golden/fingerprint.h"
#include "model/gguf_reader.h"
#include "runtime/adapter.h"
#include "runtime/metrics_data.h"
#include "runtime/launcher.h"

namespace fp {

// A case resolved against this machine and runtime. The resolve functions below build it, the case
// run completes it before its first launch (the runtime's build from its fingerprint, the prompts
// fitted: flow/passes/prompt_tokens.h adopt_fitted_prompts); after that nothing edits it. A launch's
// own folder, flag value, CPUs and additions are its LaunchPlacement.
struct CaseContext {
  Case c;
  Suite suite;                    // the suite the case belongs to: its paths are relative to suite.root
  Adapter adapter;                // a launched case's timed_args include the metrics' launch_args
  RuntimeSignatures signatures;
  MetricsData metrics;            // the runtime's own gauges, scraped in timed and sustained phases
  RuntimeCommand runtime;
  std::string model_path;         // absolute
  std::vector<Prompt> prompts;     // the prompt set, or synthetic prompts (shape.synthetic_prompts)
  // shape.prompt_tokens: the prompts were fitted to their token length (flow/passes/prompt_tokens.h), and how
  // the tokens were counted.
  bool prompts_fitted = false;
  std::string prompts_counted_by;
  std::optional<ModelFacts> model;  // from the GGUF header; none for other formats (model_note says why)
  std::string model_note;
  std::vector<std::string> gpu_backends;  // this machine's GPUs as backend names (CUDA0, ...), for all-gpus
  std::string runtime_build;      // the runtime's build (fingerprint), a fact for the cause rules; "" until known
  std::optional<GpuDeclaration> gpu_box;  // the machine declares its GPUs: GPU cases may not skip (flow/passes/gpu_machine.h)
  std::string served_model;       // the requests' "model" field (request_builder.h)
  // Extra request headers: an attached server's "Authorization: Bearer KEY", the key read from the
  // case's attach.api_key_env at run time. In memory only: never written, logged or quoted.
  std::vector<std::string> request_headers;
};

// Where and how one launch of a resolved case runs. The engines build one per launch (a block's arm,
// an A/B arm, a matrix row, a launch's own folder) instead of editing a copy of the case.
struct LaunchPlacement {
  std::string out_dir;            // the launch's folder
  std::string flag_value;         // the flag value it launches with
  std::string cgroup_procs;       // timed launches join this cgroup (runtime/cpu_quota.h); empty: none
  std::vector<int> runtime_cpus;  // timed launches run on these CPUs (the client has its own); empty: any
  int load_streams = 0;           // requests at once in the evidence pass and the probed check; 0: the
                                  // job's own (flow/passes/evidence_pass.h job_load_streams)
  // Added to the launch line after the adapter's timed_args (the threads for runtime_cpus:
  // runtime/thread_args.h), and over the case's launch.env (the kernel probe's variables).
  std::vector<std::string> timed_args;
  std::map<std::string, std::string> env;

  // The same placement, its folder `out_dir + "/" + sub`.
  LaunchPlacement below(const std::string& sub) const;
};

// A launch of `ctx` with the case's own flag value ("use"; none for an attached case) into `out_dir`.
LaunchPlacement case_placement(const CaseContext& ctx, const std::string& out_dir = "");
// The launch line's additions of a timed launch: the adapter's timed_args, then the placement's.
std::vector<std::string> timed_launch_args(const CaseContext& ctx, const LaunchPlacement& at);
// A launch's environment: the case's launch.env with the placement's over it.
std::map<std::string, std::string> launch_env(const CaseContext& ctx, const LaunchPlacement& at);

// Exit codes of a case that cannot be resolved: the same as `flashproof run` and `flashproof ab`.
enum ResolveExit { kResolveIncomplete = 2, kResolveSkip = 125 };

// A resolved case, or why not with the exit code a run takes for it: kResolveSkip when this machine
// cannot run the case (the message starts "SKIP: "), kResolveIncomplete for bad input.
class ResolvedCase {
 public:
  ResolvedCase(CaseContext ctx) : context_(std::move(ctx)) {}                                    // NOLINT: implicit by design
  ResolvedCase(Error error, int exit_code = kResolveIncomplete) : context_(std::move(error)), exit_code_(exit_code) {}  // NOLINT
  // "SKIP: <why>" with kResolveSkip.
  static ResolvedCase skip(const std::string& why) { return ResolvedCase(make_error("SKIP: " + why), kResolveSkip); }
  // The same for a case whose model file is not on this machine: judge_missing_model decides.
  static ResolvedCase skip_missing_model(const std::string& why, const std::string& case_name) {
    ResolvedCase r = skip(why);
    r.missing_model_case_ = case_name;
    return r;
  }
  // The case's name when it was skipped for its missing model, else "".
  const std::string& missing_model_case() const { return missing_model_case_; }

  bool ok() const { return context_.ok(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return context_.error(); }
  int exit_code() const { return ok() ? 0 : exit_code_; }  // 0 when resolved
  CaseContext& operator*() & { return *context_; }
  const CaseContext& operator*() const& { return *context_; }
  CaseContext* operator->() { return &*context_; }
  const CaseContext* operator->() const { return &*context_; }

 private:
  Result<CaseContext> context_;
  int exit_code_ = kResolveIncomplete;
  std::string missing_model_case_;
};

// A missing model is a skip only where the case was never set up here (issue 47: a nightly on a box
// whose deployed model was deleted stayed green). Where this machine has a golden for the case
// under `golden_root` (a fingerprint folder recorded on this machine's hardware, golden/fingerprint.h
// same_hardware, holding <case>.json or <case>/), the skip becomes a failure (kResolveIncomplete)
// naming the model path and that golden; otherwise the skip says no golden of this machine has the
// case. Anything else passes through unchanged.
ResolvedCase judge_missing_model(ResolvedCase resolved, const std::string& golden_root);

// Loads a case and resolves what its passes share: adapter, signatures, the runtime executable, the
// model (checked against its sha256, each shard of a split GGUF) and the prompts (a launch's flag
// value and folder are its LaunchPlacement: case_placement). A failure carries its exit code
// (ResolvedCase): a skip when this machine cannot run the case (no runtime installed, model not
// here, a CUDA case without a GPU), incomplete for bad input. Used by `run`, `ab` and the benchmarks in bench/.
// `runtime_path`, when set, names the runtime instead (an executable or a prefix folder: the
// side-by-side gate's --candidate-runtime; runtime/launcher.h runtime_from_path). The model's
// files are hashed here, before any launch, and only when the hash cache has no entry for them or
// `rehash` is set (util/file_hash_cache.h; --rehash of run, ab and gate).
// An attached case (case_file.h Attach) is an error here: A/B and the gates launch the runtime.
ResolvedCase resolve_case_context(const std::string& case_path, const Suite& suite, const std::string& runtime_path = "",
                                  bool rehash = false);
// The same for `flashproof run`, which also runs attached cases: for those, no runtime, model file
// or GPU check; served_model is attach.model and the API key (attach.api_key_env, read now) goes
// into request_headers.
ResolvedCase resolve_run_context(const std::string& case_path, const Suite& suite, bool rehash = false);

// A launch line as result files show it: runtime/launcher.h shown_argv ({port}, the model as the case
// wrote it), the suite's root as {suite}; secrets redacted (report/redact.h).
std::vector<std::string> shown_launch(const CaseContext& ctx, const LaunchPlacement& at, const std::vector<std::string>& extra_args);

// The fingerprint a case runs under: this machine, the runtime (asked for its version and build),
// the model's sha256 and the launch line. An error when the runtime cannot say its version.
Result<Fingerprint> case_fingerprint(const Case& c, const Adapter& adapter, const RuntimeCommand& runtime,
                                     const std::string& model_sha256);

}  // namespace fp
