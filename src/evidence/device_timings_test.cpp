#include "evidence/device_timings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/recorded_runs.h"
#include "util/text.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

const DeviceTimings& vulkan_timings() {
  const auto& sigs = fp::testing::llama_signatures();
  EXPECT_TRUE(sigs.device_timings.has_value());
  return *sigs.device_timings;
}

const KernelLine* op(const KernelTally& t, const std::string& name) {
  for (const auto& k : t.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

// The lavapipe evidence pass as flashproof ran it (build 11669, -fa on, GGML_VK_PERF_LOGGER=1 from the
// runtime data): every graph's FLASH_ATTN_EXT adds up, and the one device found is Vulkan0.
TEST(DeviceTimings, LavapipeEvidenceLogSumsEveryGraphsOps) {
  auto text = read_file(fp::testing::fixture("logs/lavapipe-perf/fa_on.evidence.log.gz"));
  ASSERT_TRUE(text.ok()) << text.error().message;
  KernelTally t = device_timing_tally(*text, vulkan_timings(), "fa_on");
  EXPECT_EQ(t.status, "ok");
  const KernelLine* fa = op(t, "FLASH_ATTN_EXT");
  ASSERT_NE(fa, nullptr);
  EXPECT_GT(fa->launches, 0);
  EXPECT_GT(fa->gpu_ns, 0);
  EXPECT_EQ(fa->device, 0);  // "ggml_vulkan: Found 1 Vulkan devices:"
  EXPECT_EQ(op(t, "SOFT_MAX"), nullptr);
  EXPECT_THAT(t.source, HasSubstr("device op timings"));
}

TEST(DeviceTimings, FlagOffRunsTheUnfusedSoftmaxOnTheDevice) {
  auto text = read_file(fp::testing::fixture("logs/lavapipe-perf/fa_off.evidence.log.gz"));
  ASSERT_TRUE(text.ok()) << text.error().message;
  KernelTally t = device_timing_tally(*text, vulkan_timings(), "fa_off");
  EXPECT_EQ(op(t, "FLASH_ATTN_EXT"), nullptr);
  ASSERT_NE(op(t, "SOFT_MAX"), nullptr);
  KernelSummary s = classify_kernels(t, fp::testing::llama_signatures());
  EXPECT_EQ(s.fused_launches, 0);
  EXPECT_GT(s.unfused_launches, 0);
}

// NVIDIA's Vulkan driver on the H200 (a quiet run: the "Found" line is a debug line it did not print,
// so the device is not known).
TEST(DeviceTimings, H200RecordingWithoutTheDeviceLine) {
  auto text = read_file(fp::testing::fixture("logs/h200-vulkan/b11669_h200/fa_on.perf.log.gz"));
  ASSERT_TRUE(text.ok()) << text.error().message;
  KernelTally t = device_timing_tally(*text, vulkan_timings(), "h200");
  const KernelLine* fa = op(t, "FLASH_ATTN_EXT");
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ(fa->launches, 80);  // 20 graphs x 4 layers
  EXPECT_EQ(fa->device, -1);
  KernelSummary s = classify_kernels(t, fp::testing::llama_signatures());
  EXPECT_EQ(s.fused_launches, 80);
  // Only the device-timings rules look at op names: CUDA's kernel rules are not listed.
  EXPECT_EQ(s.fused_patterns, std::vector<std::string>{"vulkan-flash-attn"});
}

TEST(DeviceTimings, BlocksEndAtTheirTotalAndSkipForeignLines) {
  const std::string log =
      "0.00.001.000 D ggml_vulkan: Found 2 Vulkan devices:\n"
      "Vulkan Timings:\n"
      "ADD: 3 x 2 us = 6 us\n"
      "0.00.002.000 I srv  log_server_r: request: POST /completion 200\n"
      "FLASH_ATTN_EXT dst(32,4,2,1),  q(32,2,4,1): 2 x 1.5 us = 3 us (0.1 GFLOPS/s)\n"
      "Total time: 9 us.\n"
      "FLASH_ATTN_EXT: 7 x 1 us = 7 us\n"  // outside a block: not a timing
      "Vulkan Timings:\n"
      "FLASH_ATTN_EXT dst(32,4,2,1),  q(32,2,4,1): 1 x 2e+06 us = 2e+06 us\n"
      "Total time: 2e+06 us.\n";
  KernelTally t = device_timing_tally(log, vulkan_timings(), "synthetic");
  const KernelLine* fa = op(t, "FLASH_ATTN_EXT");
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ(fa->launches, 3);
  EXPECT_EQ(fa->gpu_ns, 3000 + 2000000000LL);
  EXPECT_EQ(fa->device, -1);  // two devices: the blocks do not say whose
  ASSERT_NE(op(t, "ADD"), nullptr);
  EXPECT_EQ(op(t, "ADD")->launches, 3);
}

TEST(DeviceTimings, NoBlockIsSaidNotGuessed) {
  KernelTally t = device_timing_tally("0.00.001.000 I main: loaded\n", vulkan_timings(), "quiet");
  EXPECT_TRUE(t.kernels.empty());
  EXPECT_THAT(t.reason, HasSubstr("no \"Vulkan Timings:\" block in the log"));
  EXPECT_THAT(t.reason, HasSubstr("GGML_VK_PERF_LOGGER=1"));
}

TEST(DeviceTimings, OnlyTheBackendsTheyDescribeUseThem) {
  EXPECT_TRUE(timed_backend_expected({"Vulkan0"}, vulkan_timings()));
  EXPECT_TRUE(timed_backend_expected({"CPU", "Vulkan1"}, vulkan_timings()));
  EXPECT_FALSE(timed_backend_expected({"CUDA0"}, vulkan_timings()));
  EXPECT_FALSE(timed_backend_expected({}, vulkan_timings()));
}

}  // namespace
}  // namespace fp
