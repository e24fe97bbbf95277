// Whether the evidence pass attaches the CUPTI kernel probe: only where a GPU is present and the
// probe library was built. Otherwise level 3 is "unavailable", with the reason.
#pragma once

#include <map>
#include <string>

namespace fp {

struct GpuProbePlan {
  bool attached = false;
  std::string tally_path;
  std::map<std::string, std::string> env;  // CUDA_INJECTION64_PATH, FLASHPROOF_KERNEL_TALLY
  std::string why_not;                     // when not attached
};

// TEST ONLY. With FLASHPROOF_TEST_DOUBLE_GPU=1 the plan skips NVML and the probe library and only
// sets FLASHPROOF_KERNEL_TALLY, for the replay test double (fixtures/replay/replay_runtime.cpp),
// which copies a recorded tally there. Never set it on a real machine: the tally would not come
// from the GPU. The variable appears in the result's evidence env.
inline constexpr const char* kTestDoubleGpuVar = "FLASHPROOF_TEST_DOUBLE_GPU";

GpuProbePlan plan_gpu_probe(const std::string& tally_path);

}  // namespace fp
