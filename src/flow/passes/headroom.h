// The headroom of one launch (measure/kv_headroom.h) from what the run has: the model's GGUF facts,
// the KV cache types the launch line sets (runtime data kv_cache; the runtime's own KV cache line
// wins where it names other types: it says what it allocated), the runtime's KV and compute buffers
// from its log, and the memory measured free while it served (the host for the CPU, NVML for CUDA<k>).
#pragma once

#include <string>

#include "evidence/log_scan.h"
#include "flow/passes/case_context.h"
#include "flow/passes/timed_pass.h"
#include "measure/kv_headroom.h"

namespace fp {

// The headroom of `pass` (a launched timed pass) with its log's scan; why_not says why there is none
// (an attached server: no model file; a model without a GGUF header; a cache type of unknown size).
HeadroomOutcome launch_headroom(const CaseContext& ctx, const TimedPass& pass, const LogScan& scan);

// The NVML index of the runtime's CUDA device ordinal `k`: the k-th of the GPUs CTest allotted or
// CUDA_VISIBLE_DEVICES names (the case's launch.env first), else k; none when that entry is not an index.
std::optional<unsigned> nvml_index_of_ordinal(int k, const std::map<std::string, std::string>& launch_env);

}  // namespace fp
