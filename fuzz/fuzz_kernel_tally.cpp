// Fuzzes the level 3 kernel tally reader and its classification with the runtimes' kernel rules.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/kernel_tally.h"
#include "evidence/runtime_signatures.h"
#include "fuzz_signatures.h"

using fp::fuzz::signatures;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto tally = fp::parse_kernel_tally(text, "fuzz.tsv");
  if (!tally) {
    if (tally.error().message.empty()) __builtin_trap();
    return 0;
  }
  for (const auto& k : tally->kernels)
    if (k.launches < 0 || k.gpu_ns < 0 || k.line == 0) __builtin_trap();
  for (const auto& sigs : signatures()) {
    fp::KernelSummary s = fp::classify_kernels(*tally, sigs);
    if (s.records != tally->kernels.size()) __builtin_trap();
    double share = s.attention_share();
    if (!(share >= 0)) __builtin_trap();
  }
  return 0;
}
