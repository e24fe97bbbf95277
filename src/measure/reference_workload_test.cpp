#include "measure/reference_workload.h"

#include <cmath>

#include <gtest/gtest.h>

namespace fp {
namespace {

// The same work every time (the figure compares machines and nights, never the workload), and every
// round counts.
TEST(ReferenceWorkload, IsDeterministicAndEveryRoundCounts) {
  EXPECT_EQ(reference_workload(2), reference_workload(2));
  EXPECT_NE(reference_workload(2), reference_workload(3));
}

TEST(ReferenceWorkload, TimesAPositiveFiniteMedian) {
  const double ms = time_reference_workload(3);
  EXPECT_TRUE(std::isfinite(ms));
  EXPECT_GT(ms, 0.0);
}

}  // namespace
}  // namespace fp
