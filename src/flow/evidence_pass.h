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
#include "flow/prompt_tokens.h"

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
  FittedPrompts prompts;  // the prompts at their asked token length (flow/prompt_tokens.h): adopt them
};

Result<EvidenceOutcome> run_evidence_pass(const CaseContext& ctx);

// The evidence pass's one request: the case's first prompt (long context and token length
// included; `prompt` when given, else ctx.prompts.front()), few tokens. The probed check
// (flow/probed_check.h) sends the same one, so both runs see the same shapes.
StreamRequest evidence_request(const CaseContext& ctx, const std::string& base_url, const Prompt* prompt = nullptr);

}  // namespace fp
