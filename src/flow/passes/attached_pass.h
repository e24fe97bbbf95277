// A server that something else started (case "attach"): used as it is. No launch, no cold start;
// evidence only from its log as written after the run began (runtime/log_follower.h), and each level
// that cannot be had from there says why (the runtime data's "attached" hints).
#pragma once

#include "flow/passes/case_context.h"
#include "flow/passes/evidence_pass.h"
#include "golden/fingerprint.h"

namespace fp {

// An attached server cannot be relaunched: its timed runs are separated rounds of requests in one
// run, each standing in for a launch (its medians are a figure's "launch medians"), this many on a
// plain run (a golden is recorded from kDefaultGoldenLaunches, golden/threshold_policy.h), this
// many seconds apart, the warm-up before the first only.
inline constexpr int kAttachedRounds = 3;
inline constexpr double kAttachedRoundGapS = 2.0;

// Waits until the attached server answers 200 on the adapter's ready paths (503 while it loads, a
// refused connection while it restarts: retried until plan.ready_timeout_s). Any other status (401,
// 404) fails at once with the status and the server's body.
Status wait_attached_ready(const CaseContext& ctx);

// The evidence pass of an attached case: the log followed from now, the server's readiness, the
// case's prompts fitted to shape.prompt_tokens and sent at the job's load (send_job_load), then the verdict from what the log window holds. Required levels
// (expect.evidence) that the window lacks make it "no evidence", with the reason.
Result<EvidenceOutcome> run_attached_evidence_pass(const CaseContext& ctx, const LaunchPlacement& place);

// The fingerprint an attached case runs under: this machine, the runtime's name, "attached" for
// the version (its build is not known before it answers; the result records what it said).
Fingerprint attached_fingerprint(const Case& c);

// The build an attached server's answer names (system_fingerprint "b11669-Debian" -> "11669") by
// the runtime data's attached.build_from_system_fingerprint; "" when it names none.
std::string attached_build(const std::string& runtime, const std::string& system_fingerprint);

}  // namespace fp
