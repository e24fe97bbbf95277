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

TEST(FreeMemory, AReadingHereHasTheHostAndSaysWhyNoGpu) {
  const FreeMemory f = read_free_memory(Result<Nvml>(make_error("libnvidia-ml.so.1 not found")));
  ASSERT_TRUE(f.host_available_bytes);  // every Linux since 3.14
  EXPECT_GT(*f.host_available_bytes, 0u);
  EXPECT_TRUE(f.gpu_free_bytes.empty());
  EXPECT_FALSE(f.gpu_why_not.empty());
}

}  // namespace
}  // namespace fp
