#include "flow/paired/room_for_both.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

TimedPass served(uint64_t host_left_mib, uint64_t rss_mib) {
  TimedPass p;
  p.free_memory_low.host_available_bytes = host_left_mib * kMiB;
  p.peak_rss_bytes = rss_mib * kMiB;
  return p;
}

TEST(RoomForBoth, ASmallModelOnTheCpuFitsTwice) {
  const RoomForBoth r = room_for_both(served(20000, 120), served(20000, 118), false);
  EXPECT_TRUE(r.fits) << r.why;
  EXPECT_NE(r.why.find("host: 20000 MiB left"), std::string::npos) << r.why;
}

TEST(RoomForBoth, AModelThatTakesMostOfTheHostRunsOneAtATime) {
  // 10 GiB left beside the baseline; the candidate's 8 GiB, half again, is 12 GiB.
  const RoomForBoth r = room_for_both(served(10240, 8192), served(10240, 8192), false);
  EXPECT_FALSE(r.fits);
  EXPECT_NE(r.why.find("host: 10240 MiB left beside the baseline launch, the candidate needs 12288 MiB"), std::string::npos) << r.why;
}

TEST(RoomForBoth, OnAGpuBothMustFitWithFitsMargin) {
  TimedPass a = served(100000, 2000), b = served(100000, 2000);
  a.gpu_peak_mib = b.gpu_peak_mib = 60000;                 // 60 GiB each on a 141 GiB H200
  a.free_memory_low.gpu_free_bytes[0] = 80000 * kMiB;      // 80 GiB free beside one of them
  b.free_memory_low.gpu_free_bytes[0] = 80000 * kMiB;
  RoomForBoth r = room_for_both(a, b, true);
  EXPECT_FALSE(r.fits);
  EXPECT_NE(r.why.find("GPU 0: 80000 MiB free beside the baseline launch, the candidate needs 91024 MiB"), std::string::npos) << r.why;
  a.gpu_peak_mib = b.gpu_peak_mib = 800;                   // the realistic model: under 1 GiB
  r = room_for_both(a, b, true);
  EXPECT_TRUE(r.fits) << r.why;
}

TEST(RoomForBoth, UnmeasuredGpuMemoryKeepsLaunchesApart) {
  TimedPass a = served(100000, 2000), b = served(100000, 2000);
  a.free_memory_low.gpu_why_not = b.free_memory_low.gpu_why_not = "no NVML";
  const RoomForBoth r = room_for_both(a, b, true);
  EXPECT_FALSE(r.fits);
  EXPECT_NE(r.why.find("GPU memory not measured (no NVML)"), std::string::npos) << r.why;
  EXPECT_FALSE(room_for_both(TimedPass{}, served(1000, 10), false).fits);
}

}  // namespace
}  // namespace fp
