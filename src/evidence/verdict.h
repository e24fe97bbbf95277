// The verdict: combines every evidence level available into one answer to "is the fused attention
// really running where it should?", says which levels were used and why others were not, quotes the
// lines and kernels relied on, and flags levels that disagree.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/kernel_tally.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"

namespace fp {

enum class Activity { Active, NotActive, NoEvidence };
std::string to_string(Activity a);  // "active", "not active", "no evidence"

// What one level says.
struct LevelFinding {
  int level = 0;                // 1 log, 2 placement, 3 kernels
  std::string name;             // "log", "placement", "kernels"
  bool used = false;            // the level gave an answer
  std::optional<bool> active;   // fused op fully on the expected backend (when used)
  std::optional<bool> any_on_expected;  // some fused work on the expected backend (when used)
  bool partial = false;         // fused op split between the expected backend and others
  std::string summary;          // "156 of 156 FLASH_ATTN nodes on CUDA0"
  std::string unavailable_why;  // when !used
  std::vector<std::string> quotes;
};

struct VerdictInput {
  const LogScan* log = nullptr;            // null: no log
  const Placement* placement = nullptr;    // null: no placement scan
  const KernelSummary* kernels = nullptr;  // null: no tally given
  std::string expect_backend;              // "" : the only device holding the KV cache, if any
  std::map<std::string, std::string> hints;  // RuntimeSignatures::hints, for "unavailable" texts
  // RuntimeSignatures::attention_backends: when not empty, expect_backend names an attention
  // backend (vLLM FLASH_ATTN, ...): level 1 compares the backend each process decided, and level 3
  // the kernels of that backend. Empty: expect_backend is a device (llama.cpp CUDA0, CPU).
  std::vector<std::string> attention_backends;
};

struct Verdict {
  Activity activity = Activity::NoEvidence;
  std::string expected_backend;       // "" when neither given nor inferable
  std::string expected_from;          // "given", "KV cache device", ""
  bool names_attention_backend = false;  // expected_backend is an attention backend, not a device
  std::map<std::string, std::vector<std::string>> backends_by_process;  // level 1, backend mode
  std::map<std::string, int> fused_backends;  // placement: backend -> fused nodes
  std::vector<LevelFinding> levels;   // always levels 1, 2, 3 in order
  std::vector<int> levels_used;
  std::vector<std::string> levels_unavailable;  // "level 3 kernels: no tally given (...)"
  std::vector<std::string> quotes;    // everything relied on, level by level
  bool disagreement = false;
  std::string disagreement_detail;    // both sides quoted (levels, or processes of one log)
  bool silent_fallback = false;       // log says enabled; placement or kernels say not on the expected backend
  bool partial_offload = false;       // fused op partly on the expected backend, partly elsewhere
  std::string explanation;            // one paragraph for a person
};

Verdict decide(const VerdictInput& in);

// Multi-line text of the verdict with its evidence, for `flashproof explain` and reports.
std::string format_verdict(const Verdict& v);

}  // namespace fp
