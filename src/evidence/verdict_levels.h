// One judge per evidence level (evidence/verdict.h decide() combines them): level 1 the log
// (verdict_log.cpp), level 2 the placement of the fused op (verdict_placement.cpp), level 3 the
// kernels that ran (verdict_kernels.cpp). Each says what its level shows, or why it cannot.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "evidence/verdict.h"

namespace fp::verdict_detail {

// "; <the runtime's hint for `level`>", or "" when it has none.
inline std::string hint(const VerdictInput& in, const std::string& level) {
  auto it = in.hints.find(level);
  return it == in.hints.end() ? std::string() : "; " + it->second;
}

// Whether `v` holds `x`.
inline bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Level 1 when the expectation names a device (llama.cpp): the flash-attention state the log
// requested and resolved.
LevelFinding log_level(const VerdictInput& in);

// Level 1 when the expectation names an attention backend (vLLM): every process that logged a
// backend decision must have decided the expected one, and no fallback line may speak against it.
// Records each process's backends in `v`, and processes that disagree.
LevelFinding log_level_backend(const VerdictInput& in, Verdict& v);

// Level 2: the fused op's nodes per backend against the expected backends (complete against the
// model's layers when they are known). Records the expected backends with none in `v`.
LevelFinding placement_level(const VerdictInput& in, Verdict& v);

// Level 3: the fused attention kernels that ran, per GPU when the tally records devices, or the
// expected attention backend's kernels. Records the fused kernels per backend in `v`.
LevelFinding kernel_level(const VerdictInput& in, Verdict& v);

// "Active, degraded" (verdict_degraded.cpp): the runtime's line, or the kernels, say the fused path
// ran on converted data; records it, with cause, remedy and cost, in `v` (an active verdict only).
void find_degradation(const VerdictInput& in, Verdict& v);

}  // namespace fp::verdict_detail
