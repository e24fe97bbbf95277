#include "util/splitmix64.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(SplitMix64, IsTheReferenceSequence) {
  // First outputs of splitmix64 seeded with 0 (Vigna's reference implementation).
  SplitMix64 r(0);
  EXPECT_EQ(r.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(r.next(), 0x6e789e6aa1b965f4ull);
  SplitMix64 b(42);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(b.below(7), 7u);
}

TEST(SplitMix64, UniformStaysInTheHalfOpenUnitInterval) {
  SplitMix64 r(7);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

}  // namespace
}  // namespace fp
