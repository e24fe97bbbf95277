#include "measure/machine_load.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace fp {
namespace {

TEST(MachineLoad, BusyTimeFromProcStatsFirstLine) {
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  // user 100, nice 10, system 40, idle 1000, iowait 50, irq 5, softirq 5, steal 20: busy 180 ticks
  auto busy = busy_cpu_seconds("cpu  100 10 40 1000 50 5 5 20 0 0\n");
  ASSERT_TRUE(busy.has_value());
  EXPECT_DOUBLE_EQ(*busy, 180 / hz);
  EXPECT_FALSE(busy_cpu_seconds("cpu0 1 2 3\n").has_value());
  EXPECT_FALSE(busy_cpu_seconds("").has_value());
  EXPECT_TRUE(busy_cpu_seconds().has_value());  // this machine's
}

TEST(MachineLoad, TheOthersShareOfAllCpus) {
  // 2 CPUs for 10 s: 20 CPU-seconds; the machine was busy 15, the runtime 8 of them, we 1: others 6/20.
  EXPECT_DOUBLE_EQ(other_load_share(15, 8, 1, 10, 2), 0.3);
  EXPECT_DOUBLE_EQ(other_load_share(5, 8, 1, 10, 2), 0.0);  // accounting skew: clamped
  EXPECT_DOUBLE_EQ(other_load_share(50, 0, 0, 10, 2), 1.0);
  EXPECT_DOUBLE_EQ(other_load_share(1, 0, 0, 0, 2), 0.0);
}

}  // namespace
}  // namespace fp
