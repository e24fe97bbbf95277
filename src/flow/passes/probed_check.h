// The short probed check: ties the timed runs to the evidence pass at level 3. The timed runs carry
// no probe (it costs time), so after each timed launch the runtime is started once more in the
// timed configuration (the timed argv and env, no verbose logging) with the kernel probe attached,
// sent the evidence pass's load (the job's: several requests at once for a batch job, see
// flow/passes/evidence_pass.h job_load_streams), and the attention kernels it ran must be the set the
// evidence pass saw: the same names for one stream; the same path (fused or unfused attention
// kernels on both sides) for several at once, where batches and so kernel variants vary by launch. Its kernel families' shares join the run's kernel set (golden/kernel_families.h).
// It runs where the evidence pass had level 3: with the kernel probe (a GPU with the probe library,
// or the replay test double), or, where level 3 came from the backend's own op timings (ggml-vulkan's
// perf logger, evidence/device_timings.h), with those timings: their blocks in the check's log are
// its tally, and the device time per token its low-noise figures. Elsewhere it is "not run", with
// the reason.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "evidence/kernel_set.h"
#include "flow/passes/case_context.h"
#include "flow/passes/evidence_pass.h"
#include "flow/passes/gpu_probe.h"
#include "flow/passes/low_noise_figures.h"
#include "golden/kernel_families.h"

namespace fp {

struct ProbedCheck {
  bool ran = false;
  std::string why_not;                  // when it did not run
  std::vector<std::string> argv;        // as launched
  std::string log_path, tally_path;
  std::string load;                     // the requests it sent (flow/passes/evidence_pass.h job_load_text)
  AttentionKernelSet evidence, check;   // attention kernels: evidence pass, probed timed configuration
  std::vector<FamilyShare> families;    // the check's attention kernels by family (empty: no tally)
  std::vector<std::string> mismatches;  // empty when the kernel sets tie (the paths, under several requests at once)
  std::vector<std::string> variants;    // several requests at once: names that differ on the same path (not a failure)
  double wall_s = 0;
  // Low-noise GPU figures of the check's one request (GPU time of every kernel the run executed,
  // model load included, over the request's prompt + generated tokens); NaN when not measured.
  double gpu_ms_per_token = std::numeric_limits<double>::quiet_NaN();
  double attention_gpu_ms_per_token = std::numeric_limits<double>::quiet_NaN();
};

// Why the check cannot run after this evidence pass, or "" when it can.
std::string probed_check_blocker(const EvidenceOutcome& ev);

// Runs the check when probed_check_blocker() is empty; otherwise returns ran = false with the reason.
// An error means the runtime or the request failed (the log's tail is in the message). Its files
// (probed-check.log, kernels-probed-check.tsv) go to at.out_dir.
Result<ProbedCheck> run_probed_check(const CaseContext& ctx, const LaunchPlacement& at, const EvidenceOutcome& ev);

// The side-by-side gate's kernel figures (flow/paired/paired_runner.h), of the same definition as the
// probed check's (flow/passes/low_noise_figures.h kernel_time_per_token): one launch of the timed
// configuration with the kernel probe (`probe`, attached), serving the job's load (send_job_load,
// the case's prompts fitted as the timed launches send them), its tally read and classified. No
// kernel-set comparison: the gate compares its arms' evidence passes. It launches as `at` places it
// (flag value, CPUs, additions); its log is probed.log in at.out_dir; the tally goes where `probe` says. An error: the probe not attached, the launch or the
// request failed (the log's tail in the message), or no kernel time in the tally.
struct ProbedLoad {
  std::string log_path, tally_path;
  std::string load;      // the requests it sent (job_load_text)
  long long tokens = 0;  // their prompt and output tokens (usage)
  KernelTimePerToken per_token;
};
Result<ProbedLoad> run_probed_load(const CaseContext& ctx, const LaunchPlacement& at, const GpuProbePlan& probe);

// One probed launch's attention kernels joined to a run's kernel set (golden/kernel_families.h):
// `what` names the launch ("evidence pass", "probed check 2"). A tally without attention kernels
// adds nothing.
void add_kernel_launch(std::vector<FamilySamples>& samples, std::vector<std::string>& launches,
                       const std::vector<FamilyShare>& families, const std::string& what);

// One line for the result file: "identical to the evidence pass (fused: ...; unfused: none)",
// "DIFFERS from the evidence pass: ...", or "not run: REASON"; with the GPU time per token when
// measured ("; GPU 0.0123 ms/token, attention 0.0045 ms/token").
std::string probed_check_text(const ProbedCheck& pc);

}  // namespace fp
