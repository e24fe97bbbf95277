// Level 3 where the CUPTI probe sees nothing: a GPU backend's own per-op timings in the log.
// ggml-vulkan, run with GGML_VK_PERF_LOGGER=1, times every op it dispatches with Vulkan timestamp
// queries and prints one block per graph:
//   Vulkan Timings:
//   FLASH_ATTN_EXT dst(128,4,2,1), ...: 4 x 628.32 us = 2513.28 us (1.66886 GFLOPS/s)
//   SOFT_MAX: 2 x 1372.46 us = 2744.92 us
//   Total time: 4681.44 us.
// Each op line becomes one tally line (dispatches, GPU time, the op as its "kernel" name), so the
// runtime's kernel rules classify it like a CUPTI tally: a fused op the device executed is measured
// evidence, not the runtime's word. The runtime data's "device_timings" says how to read it.
#pragma once

#include <string>
#include <string_view>

#include "evidence/kernel_tally.h"
#include "evidence/runtime_signatures.h"

namespace fp {

// Every timing block of `log` (the whole log text, any records around the blocks), summed per op.
// The device: 0 when the log says the backend found exactly one device, otherwise unknown (-1:
// ggml-vulkan's blocks do not name their device). No block: a tally without kernels, whose reason
// says so. `source` names the log in the tally.
KernelTally device_timing_tally(std::string_view log, const DeviceTimings& timings, const std::string& source);

// Whether the expected backends are ones the device timings describe (one matches
// timings.backend, e.g. Vulkan0).
bool timed_backend_expected(const std::vector<std::string>& expected_backends, const DeviceTimings& timings);

}  // namespace fp
