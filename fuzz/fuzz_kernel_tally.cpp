// Fuzzes the level 3 kernel tally reader and its classification with the runtimes' kernel rules.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/kernel_tally.h"
#include "evidence/runtime_signatures.h"

namespace {

const std::vector<fp::RuntimeSignatures>& signatures() {
  static const std::vector<fp::RuntimeSignatures> all = [] {
    std::vector<fp::RuntimeSignatures> v;
    for (const char* runtime : {"llama-server", "vllm"}) {
      auto s = fp::load_runtime_signatures(runtime, std::string(FLASHPROOF_SOURCE_DIR) + "/src/runtime/data/" +
                                                        runtime + ".json");
      if (!s) std::abort();
      v.push_back(std::move(*s));
    }
    return v;
  }();
  return all;
}

}  // namespace

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
