#include "flow/passes/gpu_probe.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "measure/nvml.h"
#include "util/shipped_data.h"
#include "util/text.h"

namespace fp {

GpuProbePlan plan_gpu_probe(const std::string& tally_path) {
  GpuProbePlan plan;
  plan.tally_path = tally_path;
  // TEST ONLY: the replay test double (fixtures/replay) writes a recorded kernel tally where the
  // probe would. No NVML, no probe library; the variable is recorded in the run's evidence env.
  if (const char* fake = std::getenv(kTestDoubleGpuVar); fake && std::string(fake) == "1") {
    plan.attached = true;
    plan.env = {{"FLASHPROOF_KERNEL_TALLY", per_process_tally_pattern(tally_path)},
                {kTestDoubleGpuVar, "1 (test double: no GPU, no probe)"}};
    return plan;
  }
  auto nvml = Nvml::open();
  if (!nvml) {
    plan.why_not = "no GPU: " + nvml_reason(nvml.error());
    return plan;
  }
  auto count = nvml->gpu_count();
  if (!count || *count == 0) {
    plan.why_not = "no GPU: NVML lists none";
    return plan;
  }
  const char* env = std::getenv("FLASHPROOF_PROBE_LIB");
  const std::string lib = env && *env ? env : shipped_probe_library();
  if (lib.empty() || ::access(lib.c_str(), R_OK) != 0) {
    plan.why_not = "the CUPTI probe library is not built here (" + (lib.empty() ? std::string("no libflashproof_probe.so beside flashproof: no CUDA toolkit at build time") : lib) +
                   "); set FLASHPROOF_PROBE_LIB";
    return plan;
  }
  plan.attached = true;
  plan.env = {{"CUDA_INJECTION64_PATH", lib}, {"FLASHPROOF_KERNEL_TALLY", per_process_tally_pattern(tally_path)}};
  return plan;
}

Result<KernelTally> read_probe_tallies(const GpuProbePlan& plan) {
  FP_TRY(KernelTally t, read_process_tallies(plan.tally_path));
  if (t.source != plan.tally_path) {  // per-process files: keep their merge where the run's tally belongs
    if (auto st = write_file_atomic(plan.tally_path, kernel_tally_text(t)); !st) return st.error();
  }
  return t;
}

}  // namespace fp
