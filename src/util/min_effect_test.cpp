#include "util/min_effect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace fp {
namespace {

TEST(MinEffect, TheLargerOfTheRelativeEffectAndTheFloor) {
  const MinEffect e{0.05, 1.0};  // 5%, floor 1 ms
  EXPECT_DOUBLE_EQ(e.absolute_at(8), 1.0);     // 5% of 8 ms is 0.4 ms: the floor decides
  EXPECT_DOUBLE_EQ(e.absolute_at(100), 5.0);   // 5% of 100 ms is 5 ms
  EXPECT_DOUBLE_EQ(e.absolute_at(-100), 5.0);  // the reference's size counts, not its sign
  EXPECT_TRUE(e.floor_in_force(8));
  EXPECT_FALSE(e.floor_in_force(100));
}

TEST(MinEffect, AFloorBecomesARelativeEffectThroughTheReference) {
  const MinEffect e{0.05, 1.0};
  EXPECT_DOUBLE_EQ(e.relative_at(8), 0.125);  // the gate: 1 ms of an 8 ms baseline is 12.5%
  EXPECT_DOUBLE_EQ(e.relative_at(100), 0.05);
  EXPECT_DOUBLE_EQ(e.relative_at(0), 0.05);   // no reference: the relative part alone
  EXPECT_DOUBLE_EQ(e.relative_at(std::numeric_limits<double>::quiet_NaN()), 0.05);
}

TEST(MinEffect, WithoutAFloorItIsTheRelativeEffect) {
  const MinEffect e{0.02, 0};
  EXPECT_DOUBLE_EQ(e.absolute_at(7.6), 0.02 * 7.6);
  EXPECT_DOUBLE_EQ(e.relative_at(7.6), 0.02);
  EXPECT_FALSE(e.floor_in_force(0.001));
  EXPECT_EQ(e.text(), "2%");
  EXPECT_EQ((MinEffect{0.05, 1}).text(), "5%, floor 1");
}

TEST(MinEffect, UnknownWhenTheRelativePartIsNotANumber) {
  const MinEffect e{std::numeric_limits<double>::quiet_NaN(), 0};
  EXPECT_FALSE(e.known());
  EXPECT_EQ(e.text(), "unknown");
  EXPECT_FALSE((MinEffect{0, 0}).known());
  EXPECT_FALSE((MinEffect{0.05, -1}).known());
  EXPECT_TRUE((MinEffect{0.05, 0}).known());
}

}  // namespace
}  // namespace fp
