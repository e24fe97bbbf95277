// The evidence pass: the runtime launched with verbose logging (and the kernel probe where a GPU
// is present), one request of the case's own shape, then the verdict from every level available.
// Kept apart from the timed runs: verbose logging and the probe cost time.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/kernel_tally.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/signals.h"
#include "evidence/verdict.h"
#include "client/stream_client.h"
#include "flow/case_context.h"
#include "flow/gpu_probe.h"

namespace fp {

struct LogAnalysis {
  std::vector<LogRecord> records;
  LogScan scan;
  Placement placement;
};

// Reads a runtime log file and runs levels 1 and 2 over it.
Result<LogAnalysis> analyse_log(const std::string& path, const RuntimeSignatures& sigs);

struct EvidenceOutcome {
  Verdict verdict;
  CheapSignals signals;
  LogAnalysis log;
  std::optional<KernelSummary> kernels;
  GpuProbePlan probe;  // whether the kernel probe was attached, and why not
  // When fused attention was expected and the verdict is not as expected: the run's facts and the
  // known causes that fit them (evidence/causes.h); causes_line is what the failure says.
  Facts facts;
  std::vector<CauseFinding> causes;
  std::string causes_line;
  std::string log_path;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  double wall_s = 0;
  // An attached server (flow/attached_pass.h): where its log came from and what to know about it,
  // and the build its answer named (system_fingerprint).
  std::string log_source;
  std::vector<std::string> notes;
  std::string answer_fingerprint;
};

// The evidence pass of the case; for an attached case, run_attached_evidence_pass.
Result<EvidenceOutcome> run_evidence_pass(const CaseContext& ctx);

// The verdict's input for this case from the levels found: expectation, the machine's GPUs, the
// required levels and the model's layers. The caller sets the hints of unavailable levels.
VerdictInput case_verdict_input(const CaseContext& ctx, const EvidenceOutcome& out, bool gpu_case_probed);
// When fused attention was expected and the verdict is not as expected: the run's facts and the
// known causes that fit them (out.facts, out.causes, out.causes_line).
void explain_causes(const CaseContext& ctx, EvidenceOutcome& out);

// The evidence pass's one request: the case's first prompt (long context included), few tokens.
// The probed check (flow/probed_check.h) sends the same one, so both runs see the same shapes.
StreamRequest evidence_request(const CaseContext& ctx, const std::string& base_url);

}  // namespace fp
