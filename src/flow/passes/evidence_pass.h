// The evidence pass: the runtime launched with verbose logging (and the kernel probe where a GPU
// is present), one request of the case's own shape, then the verdict from every level available.
// Kept apart from the timed runs: verbose logging and the probe cost time.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/stream_client.h"
#include "evidence/kernel_tally.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/signals.h"
#include "evidence/verdict.h"
#include "flow/passes/case_context.h"
#include "flow/passes/gpu_probe.h"
#include "flow/passes/instruments.h"
#include "flow/passes/prompt_tokens.h"

namespace fp {

struct LogAnalysis {
  std::vector<LogRecord> records;
  LogScan scan;
  Placement placement;
  std::optional<KernelTally> device_timings;  // the runtime data has device_timings: its blocks in the log
};

// Reads a runtime log file and runs levels 1 and 2 over it (and collects a backend's own op
// timings for level 3, evidence/device_timings.h).
Result<LogAnalysis> analyse_log(const std::string& path, const RuntimeSignatures& sigs);

struct EvidenceOutcome {
  Verdict verdict;
  CheapSignals signals;
  LogAnalysis log;
  std::optional<KernelSummary> kernels;
  GpuProbePlan probe;  // whether the kernel probe was attached, and why not
  // The instruments (flow/passes/instruments.h) on in the launch the verdict reads; those taken off, each
  // with why (a known breakage, or the launch that broke while it was on: flow/passes/instrument_retry.h);
  // the extra launches finding out cost, one line each.
  std::vector<Instrument> instruments_on;
  std::map<std::string, std::string> instruments_off;
  int extra_launches = 0;
  std::vector<std::string> retry_steps;
  // When fused attention was expected and the verdict is not as expected: the run's facts and the
  // known causes that fit them (evidence/causes.h); causes_line is what the failure says.
  Facts facts;
  std::vector<CauseFinding> causes;
  std::string causes_line;
  std::string log_path;
  std::string load;  // the requests it sent, in words (job_load_text)
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  double wall_s = 0;
  FittedPrompts prompts;  // the prompts at their asked token length (flow/passes/prompt_tokens.h): adopt them
  // An attached server (flow/passes/attached_pass.h): where its log came from and what to know about it,
  // and the build its answer named (system_fingerprint).
  std::string log_source;
  std::vector<std::string> notes;
  std::string answer_fingerprint;
};

// The evidence pass of a launched case; an attached one has its own (flow/passes/attached_pass.h), chosen once by the case run.
// Its files (evidence.log, kernels*.tsv, instrument-retry/) go to at.out_dir.
Result<EvidenceOutcome> run_evidence_pass(const CaseContext& ctx, const LaunchPlacement& at);

// Evidence at the job's load: the requests in flight at once in the evidence pass and the probed
// check (flow/passes/probed_check.h), which send the same, so both runs see the same shapes. A batch job:
// every prompt of a round at once (its timed rounds' concurrency); at.load_streams when set (A/B's
// sustained phase); otherwise one stream. A fallback that only batching brings (another kernel for
// a batch of sequences, attention placed elsewhere for a larger batch) is then seen by the evidence.
int job_load_streams(const CaseContext& ctx, const LaunchPlacement& at);
// "one request" or "4 requests at once (the batch job's round)".
std::string job_load_text(const CaseContext& ctx, const LaunchPlacement& at);

// The load's requests: the case's prompts in order (cycled when streams exceed them; the first
// carries the long context), few tokens each: placement and kernels follow the shapes, not the
// answers' length.
std::vector<StreamRequest> evidence_requests(const CaseContext& ctx, const LaunchPlacement& at, const std::string& base_url);

// Sends the load and waits for every answer; the first failure is the error.
struct LoadAnswers {
  long long prompt_tokens = 0, completion_tokens = 0;  // summed over the requests that report them
  std::string system_fingerprint;                      // the first answer's that names one
};
Result<LoadAnswers> send_job_load(const CaseContext& ctx, const LaunchPlacement& at, const std::string& base_url);

// The verdict's input for this case from the levels found: expectation, the machine's GPUs, the
// required levels and the model's layers. The caller sets the hints of unavailable levels.
VerdictInput case_verdict_input(const CaseContext& ctx, const EvidenceOutcome& out, bool gpu_case_probed);
// When fused attention was expected and the verdict is not as expected: the run's facts and the
// known causes that fit them (out.facts, out.causes, out.causes_line).
void explain_causes(const CaseContext& ctx, EvidenceOutcome& out);

}  // namespace fp
