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

GpuProbePlan plan_gpu_probe(const std::string& tally_path);

}  // namespace fp
