// What a machine declares about its GPUs, and what a case needs of them. A GPU box declares its GPUs
// so that losing them is a failure, not a skip: with a declaration, "no GPU", "no NVML", "probe not
// loaded" and "CUPTI refused" fail the case with their reason (exit 2 or 1) instead of exit 125.
//
// The declaration, first found wins:
//   FLASHPROOF_EXPECT_GPUS=N         (N >= 1; 0 declares a machine without GPUs, as if unset)
//   FLASHPROOF_MACHINE_FILE=PATH     a JSON file {"gpus": N, "comment": "..."}
//   /etc/flashproof/machine.json     the same, where it exists
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "case/case_file.h"
#include "evidence/runtime_signatures.h"
#include "util/result.h"

namespace fp {

inline constexpr const char* kExpectGpusVar = "FLASHPROOF_EXPECT_GPUS";
inline constexpr const char* kMachineFileVar = "FLASHPROOF_MACHINE_FILE";
inline constexpr const char* kDefaultMachineFile = "/etc/flashproof/machine.json";

struct GpuDeclaration {
  int gpus = 0;
  std::string source;  // "FLASHPROOF_EXPECT_GPUS=2" or the machine file's path
};

using GetEnvFn = std::function<const char*(const char*)>;

// The machine's declaration; nullopt when none (or it declares 0 GPUs). A malformed value or file is
// an error naming the variable or file, the value and what would be valid.
Result<std::optional<GpuDeclaration>> declared_gpus(const GetEnvFn& getenv, const std::string& default_file = kDefaultMachineFile);
Result<std::optional<GpuDeclaration>> declared_gpus();

// How many GPUs a case needs to run (for CTest RESOURCE_GROUPS gpus:N): one more than the highest
// device number among its expected GPU backends (CUDA1 alone needs two: ordinal 1 is the second
// visible GPU), `all_gpus` for "all-gpus" (the machine's declared count, at least 1), 0 for a case
// that expects no GPU backend.
int gpus_needed(const Case& c, const RuntimeSignatures& sigs, int all_gpus = 1);

// How many GPUs a runtime started now will see: those CTest allotted (runtime/ctest_gpus.h), else
// those CUDA_VISIBLE_DEVICES names, else every GPU NVML lists; 0 when none is known.
int visible_gpus();

}  // namespace fp
