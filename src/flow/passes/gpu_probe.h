// Whether the evidence pass attaches the CUPTI kernel probe: only where a GPU is present and the
// probe library was built. Otherwise level 3 is "unavailable", with the reason.
#pragma once

#include <map>
#include <string>

#include "evidence/kernel_tally.h"
#include "util/result.h"

namespace fp {

struct GpuProbePlan {
  bool attached = false;
  std::string tally_path;  // the run's tally: every process's, merged (read_probe_tallies writes it)
  std::map<std::string, std::string> env;  // CUDA_INJECTION64_PATH, FLASHPROOF_KERNEL_TALLY (one file per
                                           // process: evidence/kernel_tally.h per_process_tally_pattern)
  std::string why_not;                     // when not attached
};

// TEST ONLY. With FLASHPROOF_TEST_DOUBLE_GPU=1 the plan skips NVML and the probe library and only
// sets FLASHPROOF_KERNEL_TALLY, for the replay test double (fixtures/replay/replay_runtime.cpp),
// which copies a recorded tally there. Never set it on a real machine: the tally would not come
// from the GPU. The variable appears in the result's evidence env.
inline constexpr const char* kTestDoubleGpuVar = "FLASHPROOF_TEST_DOUBLE_GPU";

GpuProbePlan plan_gpu_probe(const std::string& tally_path);

// After the runtime stopped: the tallies of all its processes, merged (evidence/kernel_tally.h
// read_process_tallies), and written to plan.tally_path beside the per-process files when there
// were any. A missing tally is an error (the probe was never loaded).
Result<KernelTally> read_probe_tallies(const GpuProbePlan& plan);

}  // namespace fp
