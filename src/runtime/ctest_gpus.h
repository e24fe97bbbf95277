// The GPUs CTest gave this test, as the runtime must see them. A test that declares
// RESOURCE_GROUPS "gpus:1" and runs under `ctest --resource-spec-file SPEC` gets
//   CTEST_RESOURCE_GROUP_COUNT=1
//   CTEST_RESOURCE_GROUP_0=gpus
//   CTEST_RESOURCE_GROUP_0_GPUS=id:3,slots:1          (several: "id:3,slots:1;id:5,slots:1")
// and the runtime is started with CUDA_VISIBLE_DEVICES=3 (ids in NVML's order, the spec's ids:
// `flashproof gpus --resource-spec`) and CUDA_DEVICE_ORDER=PCI_BUS_ID so CUDA numbers the GPUs the
// way NVML does. So `ctest -j8` on an 8-GPU box runs eight GPU cases at once, never two on one GPU.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "util/result.h"

namespace fp {

using GetEnv = std::function<const char*(const char*)>;

// The comma-separated GPU ids of every resource group, in group order; nullopt when CTest allotted
// no GPU (not run by CTest with a resource spec, or the test declares no gpus). A malformed value is
// an error naming the variable and the value.
Result<std::optional<std::string>> ctest_gpu_ids(const GetEnv& getenv);
// The same from this process's environment.
Result<std::optional<std::string>> ctest_gpu_ids();

}  // namespace fp
