#include "measure/free_memory.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(FreeMemory, MemAvailableIsReadInKib) {
  EXPECT_EQ(mem_available_bytes("MemTotal:       24576000 kB\nMemFree:        1000 kB\nMemAvailable:   20000000 kB\n"),
            20000000ull * 1024);
  EXPECT_FALSE(mem_available_bytes("MemTotal:       24576000 kB\n"));  // kernels before 3.14 have none
  EXPECT_FALSE(mem_available_bytes("MemAvailable:   lots\n"));
}

TEST(FreeMemory, KeepsTheLowestOfEachPlace) {
  FreeMemory a;
  a.host_available_bytes = 100;
  a.gpu_free_bytes = {{0, 50}};
  a.readings = 1;
  FreeMemory b;
  b.host_available_bytes = 80;
  b.gpu_free_bytes = {{0, 60}, {1, 70}};
  b.readings = 1;
  a.keep_lowest(b);
  EXPECT_EQ(*a.host_available_bytes, 80u);
  EXPECT_EQ(a.gpu_free_bytes.at(0), 50u);
  EXPECT_EQ(a.gpu_free_bytes.at(1), 70u);
  EXPECT_EQ(a.readings, 2);
  FreeMemory none;
  none.keep_lowest(b);
  EXPECT_EQ(*none.host_available_bytes, 80u);
}

TEST(FreeMemory, KeepsWhoElseHeldThePlaceAtItsLowestReading) {
  FreeMemory a;
  a.host_available_bytes = 100;
  a.gpu_free_bytes = {{0, 50}};
  a.gpu_others = {{0, {{11, "embedder", "", 10.0, ""}}}};
  a.host_matches = {{21, "sleep", "sleep", 1.0, ""}};
  FreeMemory b;
  b.host_available_bytes = 80;  // lower: its host processes are the ones that held it
  b.gpu_free_bytes = {{0, 60}, {1, 70}};
  b.gpu_others = {{0, {}}};
  b.gpu_others_why_not = {{1, "Insufficient Permissions"}};
  a.keep_lowest(b);
  ASSERT_EQ(a.gpu_others.at(0).size(), 1u);  // GPU 0 was lower in a: a's processes stay
  EXPECT_EQ(a.gpu_others.at(0)[0].pid, 11u);
  EXPECT_EQ(a.gpu_others_why_not.at(1), "Insufficient Permissions");
  EXPECT_TRUE(a.host_matches.empty());
}

TEST(FreeMemory, AReadingHereHasTheHostAndSaysWhyNoGpu) {
  const FreeMemory f = read_free_memory(Result<Nvml>(make_error("libnvidia-ml.so.1 not found")));
  ASSERT_TRUE(f.host_available_bytes);  // every Linux since 3.14
  EXPECT_GT(*f.host_available_bytes, 0u);
  EXPECT_TRUE(f.gpu_free_bytes.empty());
  EXPECT_FALSE(f.gpu_why_not.empty());
}

}  // namespace
}  // namespace fp
