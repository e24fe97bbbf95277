#include "history/change_points.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

// Normal noise from splitmix64 (Box-Muller), so every series here is the same on every machine.
class Noise {
 public:
  explicit Noise(uint64_t seed) : rng_(seed) {}
  double normal(double mean, double sd) {
    const double u1 = (static_cast<double>(rng_.next() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(rng_.next() >> 11) + 0.5) / 9007199254740992.0;
    return mean + sd * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  void append(std::vector<double>& s, size_t n, double mean, double sd) {
    for (size_t i = 0; i < n; ++i) s.push_back(normal(mean, sd));
  }

 private:
  SplitMix64 rng_;
};

TEST(ChangePoints, EnergyStatisticOfAPlainSplit) {
  // between: 4 pairs at distance 1; nothing within either part: q = 2*2/4 * (2/4 * 4) = 2
  EXPECT_DOUBLE_EQ(energy_q({0, 0, 1, 1}, 2), 2.0);
  EXPECT_DOUBLE_EQ(energy_q({5, 5, 5, 5, 5, 5}, 3), 0.0);
  // the split in the middle of a step scores higher than one beside it
  std::vector<double> step = {1, 1, 1, 1, 2, 2, 2, 2};
  EXPECT_GT(energy_q(step, 4), energy_q(step, 3));
  EXPECT_GT(energy_q(step, 4), energy_q(step, 5));
}

TEST(ChangePoints, FindsOneStep) {
  Noise noise(1);
  std::vector<double> s;
  noise.append(s, 11, 100, 2);
  noise.append(s, 9, 115, 2);
  auto cps = find_change_points(s);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 11u);
  EXPECT_LE(cps[0].p_value, 0.01);
  EXPECT_NEAR(cps[0].median_before, 100, 2);
  EXPECT_NEAR(cps[0].median_after, 115, 2);
  EXPECT_NEAR(cps[0].relative_change, 0.15, 0.03);
  EXPECT_DOUBLE_EQ(cps[0].q, energy_q(s, 11));  // the incremental sums agree with the direct formula
}

TEST(ChangePoints, FindsAStepDownAsWell) {
  Noise noise(2);
  std::vector<double> s;
  noise.append(s, 8, 50, 1);
  noise.append(s, 8, 40, 1);
  auto cps = find_change_points(s);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 8u);
  EXPECT_LT(cps[0].relative_change, -0.15);
}

TEST(ChangePoints, FindsTwoStepsByBisection) {
  Noise noise(3);
  std::vector<double> s;
  noise.append(s, 12, 100, 2);
  noise.append(s, 12, 120, 2);
  noise.append(s, 12, 105, 2);
  auto cps = find_change_points(s);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 12u);
  EXPECT_EQ(cps[1].index, 24u);
  // medians are of the segments between change points
  EXPECT_NEAR(cps[0].median_before, 100, 2);
  EXPECT_NEAR(cps[0].median_after, 120, 2);
  EXPECT_NEAR(cps[1].median_before, 120, 2);
  EXPECT_NEAR(cps[1].median_after, 105, 2);
}

TEST(ChangePoints, NoStepInNoiseMostOfTheTime) {
  // 100 series without a step: the false-alarm rate stays near the permutation test's 0.01.
  int alarms = 0;
  for (uint64_t seed = 100; seed < 200; ++seed) {
    Noise noise(seed);
    std::vector<double> s;
    noise.append(s, 20, 100, 3);
    if (!find_change_points(s).empty()) ++alarms;
  }
  EXPECT_LE(alarms, 4) << "false alarms in 100 noise series";
}

TEST(ChangePoints, ASingleOutlierNightIsNoStep) {
  Noise noise(4);
  std::vector<double> s;
  noise.append(s, 20, 100, 2);
  s[10] = 160;
  EXPECT_TRUE(find_change_points(s).empty());
}

TEST(ChangePoints, TooShortOrFlatSeriesHaveNone) {
  EXPECT_TRUE(find_change_points({}).empty());
  EXPECT_TRUE(find_change_points({1, 1, 1, 9, 9}).empty());  // 5 < 2 * min_segment
  EXPECT_TRUE(find_change_points(std::vector<double>(30, 7.0)).empty());
  // a step needs min_segment values after it
  Noise noise(5);
  std::vector<double> s;
  noise.append(s, 15, 100, 1);
  noise.append(s, 2, 130, 1);
  EXPECT_TRUE(find_change_points(s).empty());
  s.push_back(130);
  auto cps = find_change_points(s);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 15u);
}

TEST(ChangePoints, SameInputSameAnswer) {
  Noise noise(6);
  std::vector<double> s;
  noise.append(s, 10, 100, 4);
  noise.append(s, 10, 106, 4);  // a marginal step: the p-value is not trivially the smallest
  auto a = find_change_points(s);
  auto b = find_change_points(s);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
  ChangePointOptions loose;
  loose.max_p_value = 1;  // every best split counts: the p-value itself must repeat
  auto c = find_change_points(s, loose);
  auto d = find_change_points(s, loose);
  ASSERT_FALSE(c.empty());
  ASSERT_EQ(c.size(), d.size());
  for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i].p_value, d[i].p_value);
}

TEST(ChangePoints, MedianOfEvenAndOddCounts) {
  EXPECT_EQ(median_of({3, 1, 2}), 2);
  EXPECT_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median_of({}), 0);
}

}  // namespace
}  // namespace fp
