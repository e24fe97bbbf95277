#include "flow/paired/paired_memory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ArmLaunch launch(const std::string& arm, int block, double compute_mib, double rss_mib, const std::string& kv_device = "CPU") {
  ArmLaunch l;
  l.arm = arm;
  l.block = block;
  LaunchMemory m;
  m.kv_total_mib = 64;
  m.kv_mib_by_device = {{kv_device, 64}};
  m.compute_mib_by_device = {{"CPU", compute_mib}};
  m.host_peak_rss_mib = rss_mib;
  l.memory = m;
  return l;
}

PairedOutcome outcome(const std::vector<ArmLaunch>& launches) {
  PairedOutcome o;
  o.arm_a = "baseline";
  o.arm_b = "candidate";
  o.launches = launches;
  return o;
}

TEST(PairedMemory, TheSameBuffersPass) {
  auto m = compare_paired_memory(outcome({launch("baseline", 0, 19, 300), launch("candidate", 0, 19, 302),
                                          launch("baseline", 1, 19, 305), launch("candidate", 1, 19, 301)}));
  EXPECT_THAT(m.figures, ElementsAre("memory.compute_mib.CPU", "memory.host_peak_rss_mib", "memory.kv_cache_mib",
                                     "memory.kv_cache_mib.CPU"));
  EXPECT_TRUE(m.failures().empty());
  EXPECT_FALSE(m.kv_moved);
}

// A compute buffer that grew from 19 to 87 MiB (medians of each build's launches) fails the case,
// naming the figure and both values; a launch that failed is left out.
TEST(PairedMemory, AGrownBufferFailsNamingBothValues) {
  ArmLaunch broken = launch("candidate", 2, 500, 300);
  broken.errors.push_back("request failed");
  auto m = compare_paired_memory(outcome({launch("baseline", 0, 19, 300), launch("candidate", 0, 87, 300),
                                          launch("baseline", 1, 19, 300), launch("candidate", 1, 87, 300), broken}));
  ASSERT_EQ(m.failures().size(), 1u);
  EXPECT_THAT(m.failures()[0], HasSubstr("MEMORY memory.compute_mib.CPU grew: 19 -> 87 MiB"));
}

TEST(PairedMemory, AKvCacheOnAnotherDeviceFails) {
  auto m = compare_paired_memory(outcome({launch("baseline", 0, 19, 300, "CUDA0"), launch("candidate", 0, 19, 300, "CPU")}));
  ASSERT_TRUE(m.kv_moved.has_value());
  EXPECT_THAT(*m.kv_moved, HasSubstr("KV CACHE MOVED"));
  EXPECT_THAT(m.only_one_arm, ElementsAre("memory.kv_cache_mib.CUDA0 (baseline only)", "memory.kv_cache_mib.CPU (candidate only)"));
}

}  // namespace
}  // namespace fp
