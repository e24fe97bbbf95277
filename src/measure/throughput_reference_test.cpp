#include "measure/throughput_reference.h"

#include <cmath>

#include <gtest/gtest.h>

namespace fp {
namespace {

// The same work every time and whatever the number of threads (the figure compares machines and
// nights, never the workload): each row is computed the same way by whichever thread owns it. A
// thread count that does not divide the rows (3, 7) still covers every row once.
TEST(ThroughputReference, IsDeterministicAndIndependentOfThreads) {
  const double one = throughput_workload(1, 6);
  EXPECT_TRUE(std::isfinite(one));
  EXPECT_NE(one, 0.0);
  EXPECT_EQ(one, throughput_workload(1, 6));
  for (int threads : {2, 3, 7}) EXPECT_EQ(one, throughput_workload(threads, 6)) << threads << " threads";
  // Every layer counts: one more changes the result (odd and even layer counts end in either buffer).
  EXPECT_NE(throughput_workload(2, 5), one);
  EXPECT_NE(throughput_workload(2, 7), one);
}

TEST(ThroughputReference, UsesTheCpusThisProcessMayRunOn) {
  const int t = throughput_threads();
  EXPECT_GE(t, 1);
  EXPECT_LE(t, kThroughputMaxThreads);
}

TEST(ThroughputReference, TimesAPositiveFiniteMedian) {
  const double ms = time_throughput_reference(3);
  EXPECT_TRUE(std::isfinite(ms));
  EXPECT_GT(ms, 0.0);
}

}  // namespace
}  // namespace fp
