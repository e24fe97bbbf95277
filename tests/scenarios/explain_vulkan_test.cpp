// `flashproof explain` on the recorded Vulkan runs (fixtures/logs/vulkan: Debian's build 11669 on
// Mesa's lavapipe): the scheduler prints Vulkan0 as "Vulka", and the verdicts must still name it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/fixtures.h"
#include "testing/run_explain.h"


namespace fp {
namespace {

using fp::testing::Ran;

// `explain --expect-backend Vulkan0` on a recorded log under fixtures/logs/.
Ran explain_vulkan_log(const std::string& log, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--runtime", "llama-server", "--log", fp::testing::fixture("logs/" + log),
                                   "--expect-backend", "Vulkan0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return fp::testing::run_explain(args);
}

Ran explain_vulkan(const std::string& name, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--layers", "2"});
  return explain_vulkan_log("vulkan/b11669_tiny_lavapipe_" + name + ".log.gz", extra);
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(ExplainVulkan, HealthyRunIsActiveOnVulkan0) {
  Ran r = explain_vulkan("fa_on", {"--require", "log,placement"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "verdict: active")) << r.out;
  EXPECT_TRUE(has(r.out, "level 2 placement: 30 of 30 FLASH_ATTN nodes on Vulkan0")) << r.out;
  EXPECT_TRUE(has(r.out, "backend names: the scheduler prints backend names cut to 5 characters: \"Vulka\" is Vulkan0")) << r.out;
  EXPECT_TRUE(has(r.out, "level 3 kernels: unavailable: not applicable: the kernel probe (CUPTI) does not see what Vulkan0 dispatches"))
      << r.out;
}

TEST(ExplainVulkan, PartialOffloadFailsWithCountsAndCause) {
  Ran r = explain_vulkan("ngl2");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "fused op placed on: Vulkan0 19, CPU 11")) << r.out;
  EXPECT_TRUE(has(r.out, "partial offload")) << r.out;
  EXPECT_TRUE(has(r.out, "layers offloaded 2; of 3: not every layer is offloaded to the GPU")) << r.out;
}

TEST(ExplainVulkan, FlagOffIsTheSoftMaxPathOnVulkan0) {
  Ran r = explain_vulkan("fa_off");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "SOFT_MAX nodes: Vulkan0 30")) << r.out;
}

// lavapipe without GGML_VK_VISIBLE_DEVICES: ggml-vulkan takes no device, everything runs on the CPU.
TEST(ExplainVulkan, NoDeviceNamesTheSkippedCpuTypeDevice) {
  Ran r = explain_vulkan("no_device");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "(none on Vulkan0)")) << r.out;
  EXPECT_TRUE(has(r.out, "ggml-vulkan skips CPU-type devices such as Mesa's lavapipe (llvmpipe) unless GGML_VK_VISIBLE_DEVICES"))
      << r.out;
}

// The device line (printed while the backends load) carries the facts of the Vulkan cause rules.
TEST(ExplainVulkan, LavapipeFactsReachTheCauses) {
  Ran r = explain_vulkan("ngl2");
  // FLASH_ATTN ran on Vulkan0 for layer 1: the scalar path is no cause of this fallback.
  EXPECT_FALSE(has(r.out, "matrix cores none")) << r.out;
  EXPECT_TRUE(has(r.out, "the Vulkan device is CPU-type")) << r.out;
}

// NVIDIA's Vulkan driver on the H200 (fixtures/logs/h200-vulkan/b11669_h200: Debian's build 11669,
// driver 580.159.04, the EGL library as the ICD): where FLASH_ATTN ran, and why not where it did not.
Ran explain_h200_vulkan(const std::string& name) {
  return explain_vulkan_log("h200-vulkan/b11669_h200/" + name + ".verbose.log.gz");
}

TEST(ExplainVulkanH200, ActiveOnTheH200) {
  Ran r = explain_h200_vulkan("fa_on");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "level 2 placement: 76 of 76 FLASH_ATTN nodes on Vulkan0")) << r.out;
  EXPECT_TRUE(has(r.out, "\"Vulka\" is Vulkan0")) << r.out;
}

// Debian's 0.27.0 runs an iq4_nl cache on Vulkan (upstream's list leaves it out; ggml-cuda does not).
TEST(ExplainVulkanH200, Iq4NlCacheRunsOnVulkan) {
  Ran r = explain_h200_vulkan("iq4_nl");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "76 of 76 FLASH_ATTN nodes on Vulkan0")) << r.out;
}

TEST(ExplainVulkanH200, HeadSize36FallsBackWithItsCause) {
  Ran r = explain_h200_vulkan("hd36");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "38 of 38 FLASH_ATTN nodes on CPU (none on Vulkan0)")) << r.out;
  EXPECT_TRUE(has(r.out, "ggml-vulkan did not run Flash Attention for head size 36 here")) << r.out;
  EXPECT_TRUE(has(r.out, "a model whose head size is a multiple of 8 runs fused attention on Vulkan")) << r.out;
  EXPECT_FALSE(has(r.out, "no known cause")) << r.out;
}

TEST(ExplainVulkanH200, HeadSize48RunsOnVulkan) {
  Ran r = explain_h200_vulkan("hd48");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "38 of 38 FLASH_ATTN nodes on Vulkan0")) << r.out;
}

TEST(ExplainVulkanH200, PartialOffloadNamesIt) {
  Ran r = explain_h200_vulkan("partial_ngl2");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "Vulkan0 76, CPU 60") || has(r.out, "CPU 60, Vulkan0 76") || has(r.out, "Vulkan0 43, CPU 33")) << r.out;
  EXPECT_TRUE(has(r.out, "not every layer is offloaded to the GPU")) << r.out;
}

// Level 3 on Vulkan: ggml-vulkan's own op timings (GGML_VK_PERF_LOGGER), measured on the device, in
// flashproof's recorded lavapipe evidence logs (fixtures/logs/lavapipe-perf) and the H200 recording.
TEST(ExplainVulkanTimings, FusedOpMeasuredOnVulkan0IsLevel3) {
  Ran r = explain_vulkan_log("lavapipe-perf/fa_on.evidence.log.gz", {"--layers", "2", "--require", "log,placement,kernels"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "verdict: active")) << r.out;
  EXPECT_TRUE(has(r.out, "attention kernel families: vulkan-flash-attn 100.0%")) << r.out;
  EXPECT_TRUE(has(r.out, "level 3 kernels: ")) << r.out;
  EXPECT_TRUE(has(r.out, "by device: Vulkan0 ")) << r.out;
  EXPECT_FALSE(has(r.out, "does not see what Vulkan0 dispatches")) << r.out;
}

TEST(ExplainVulkanTimings, FlagOffShowsTheUnfusedSoftmaxOnTheDevice) {
  Ran r = explain_vulkan_log("lavapipe-perf/fa_off.evidence.log.gz", {"--layers", "2", "--require", "kernels"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "verdict: not active")) << r.out;
  EXPECT_TRUE(has(r.out, "unfused attention launches (\"SOFT_MAX\")")) << r.out;
}

TEST(ExplainVulkanTimings, H200RecordingIsActiveWithoutPlacement) {
  Ran r = explain_vulkan_log("h200-vulkan/b11669_h200/fa_on.perf.log.gz", {"--require", "log,kernels"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "level 3 kernels: 80 fused attention kernel launches")) << r.out;
}

}  // namespace
}  // namespace fp
