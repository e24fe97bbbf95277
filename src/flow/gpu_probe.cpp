#include "flow/gpu_probe.h"

#include <unistd.h>

#include <cstdlib>

#include "measure/nvml.h"

namespace fp {

GpuProbePlan plan_gpu_probe(const std::string& tally_path) {
  GpuProbePlan plan;
  plan.tally_path = tally_path;
  auto nvml = Nvml::open();
  if (!nvml) {
    plan.why_not = "no GPU: " + nvml.error().message;
    return plan;
  }
  auto count = nvml->gpu_count();
  if (!count || *count == 0) {
    plan.why_not = "no GPU: NVML lists none";
    return plan;
  }
  const char* env = std::getenv("FLASHPROOF_PROBE_LIB");
#ifdef FLASHPROOF_PROBE_PATH
  std::string lib = env && *env ? env : FLASHPROOF_PROBE_PATH;
#else
  std::string lib = env && *env ? env : "";
#endif
  if (lib.empty() || ::access(lib.c_str(), R_OK) != 0) {
    plan.why_not = "the CUPTI probe library is not built here (" + (lib.empty() ? std::string("no CUDA toolkit at build time") : lib) +
                   "); set FLASHPROOF_PROBE_LIB";
    return plan;
  }
  plan.attached = true;
  plan.env = {{"CUDA_INJECTION64_PATH", lib}, {"FLASHPROOF_KERNEL_TALLY", tally_path}};
  return plan;
}

}  // namespace fp
