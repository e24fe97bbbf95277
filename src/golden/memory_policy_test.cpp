#include "golden/memory_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

TEST(MemoryPolicy, MemoryFiguresAreNamedMemory) {
  EXPECT_TRUE(is_memory_figure("memory.kv_cache_mib"));
  EXPECT_TRUE(is_memory_figure("memory.compute_mib.CUDA0"));
  EXPECT_FALSE(is_memory_figure("ttft_ms"));
  EXPECT_FALSE(is_memory_figure("kv_cache_mib"));
}

// A change counts beyond both parts of the tolerance: the larger of 2% and 16 MiB for buffers.
TEST(MemoryPolicy, TheToleranceIsTheLargerOfItsRelativeAndAbsoluteParts) {
  const MemoryTolerance t = memory_tolerance("memory.compute_mib.CPU");
  EXPECT_DOUBLE_EQ(t.at(100), 16);      // 2% of 100 MiB is 2 MiB: 16 MiB decides
  EXPECT_DOUBLE_EQ(t.at(4096), 81.92);  // 2% of 4 GiB
  EXPECT_EQ(judge_memory("memory.compute_mib.CPU", 100, 116).status, MemoryStatus::same);
  EXPECT_EQ(judge_memory("memory.compute_mib.CPU", 100, 116.5).status, MemoryStatus::grew);
  EXPECT_EQ(judge_memory("memory.kv_cache_mib", 4096, 4170).status, MemoryStatus::same);
  EXPECT_EQ(judge_memory("memory.kv_cache_mib", 4096, 4200).status, MemoryStatus::grew);
  EXPECT_EQ(judge_memory("memory.kv_cache_mib", 4096, 2048).status, MemoryStatus::dropped);
}

TEST(MemoryPolicy, AGrowthNamesTheFigureBothValuesAndTheTolerance) {
  const MemoryJudgement j = judge_memory("memory.compute_mib.CUDA0", 512, 1024);
  EXPECT_TRUE(j.failed());
  EXPECT_DOUBLE_EQ(j.change, 512);
  EXPECT_EQ(j.message,
            "memory.compute_mib.CUDA0 grew: 512 -> 1024 MiB (+512 MiB, +100%), beyond the tolerance of 16 MiB (2%, at least 16 MiB)");
  const MemoryJudgement d = judge_memory("memory.compute_mib.CUDA0", 1024, 512);
  EXPECT_FALSE(d.failed());
  EXPECT_THAT(d.message, HasSubstr("dropped: 1024 -> 512 MiB (-512 MiB, -50%)"));
  EXPECT_THAT(d.message, HasSubstr("reported, not a failure"));
}

TEST(MemoryPolicy, ProcessPeaksHaveWiderTolerancesThanBuffers) {
  EXPECT_GT(memory_tolerance("memory.host_peak_rss_mib").absolute_mib, kBufferAbsoluteToleranceMib);
  EXPECT_GT(memory_tolerance("memory.gpu_peak_mib").absolute_mib, kBufferAbsoluteToleranceMib);
}

TEST(MemoryPolicy, AKvCacheMoveNamesTheDevicesBeforeAndNow) {
  const std::map<std::string, double> gpu = {{"memory.kv_cache_mib", 1024}, {"memory.kv_cache_mib.CUDA0", 1024}};
  const std::map<std::string, double> cpu = {{"memory.kv_cache_mib", 1024}, {"memory.kv_cache_mib.CPU", 1024}};
  const std::map<std::string, double> split = {{"memory.kv_cache_mib.CUDA0", 512}, {"memory.kv_cache_mib.CPU", 512}};
  EXPECT_EQ(kv_cache_devices(gpu), std::vector<std::string>{"CUDA0"});
  auto moved = kv_cache_moved(gpu, cpu);
  ASSERT_TRUE(moved.has_value());
  EXPECT_THAT(*moved, HasSubstr("KV CACHE MOVED: the KV cache was on CUDA0 and is on CPU now"));
  auto partly = kv_cache_moved(gpu, split);
  ASSERT_TRUE(partly.has_value());
  EXPECT_THAT(*partly, HasSubstr("is on CPU, CUDA0 now"));
  EXPECT_FALSE(kv_cache_moved(gpu, gpu).has_value());
  EXPECT_FALSE(kv_cache_moved(gpu, {}).has_value());  // no KV figures now: not a move (the figure is missing)
}

}  // namespace
}  // namespace fp
