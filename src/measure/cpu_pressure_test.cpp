#include "measure/cpu_pressure.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(CpuPressure, TheSomeLinesTotal) {
  const char* text =
      "some avg10=99.23 avg60=98.96 avg300=98.00 total=9172505021\n"
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
  ASSERT_TRUE(cpu_pressure_total_us(text).has_value());
  EXPECT_DOUBLE_EQ(*cpu_pressure_total_us(text), 9172505021.0);
  EXPECT_FALSE(cpu_pressure_total_us("full avg10=0.00 total=5\n").has_value());
  EXPECT_FALSE(cpu_pressure_total_us("").has_value());
}

TEST(CpuPressure, ShareOfWallTimeStalled) {
  EXPECT_DOUBLE_EQ(cpu_pressure_share(1e6, 1.5e6, 1.0), 0.5);  // 0.5 s stalled in 1 s
  EXPECT_DOUBLE_EQ(cpu_pressure_share(1e6, 4e6, 1.0), 1.0);    // clamped
  EXPECT_DOUBLE_EQ(cpu_pressure_share(2e6, 1e6, 1.0), 0.0);    // a counter that went back: nothing known
  EXPECT_DOUBLE_EQ(cpu_pressure_share(1e6, 2e6, 0.0), 0.0);
}

}  // namespace
}  // namespace fp
