#include "measure/signed_rank.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace fp {
namespace {

// The p by enumerating every sign pattern (n <= 16), mid-ranks computed the plain way: an
// independent check of the counting in signed_rank_p_above.
double brute_force_p(const std::vector<double>& x, double bound) {
  std::vector<double> mag, rank;
  std::vector<bool> above;
  for (double v : x) {
    if (v == bound) continue;  // Wilcoxon: values at the bound are dropped
    mag.push_back(std::fabs(v - bound));
    above.push_back(v > bound);
  }
  const size_t n = mag.size();
  for (size_t i = 0; i < n; ++i) {
    double less = 0, equal = 0;
    for (size_t j = 0; j < n; ++j) {
      less += mag[j] < mag[i];
      equal += mag[j] == mag[i];
    }
    rank.push_back(less + (equal + 1) / 2);
  }
  double observed = 0;
  for (size_t i = 0; i < n; ++i) observed += above[i] ? rank[i] : 0;
  int at_least = 0;
  for (unsigned pattern = 0; pattern < (1u << n); ++pattern) {
    double w = 0;
    for (size_t i = 0; i < n; ++i) w += (pattern >> i & 1u) ? rank[i] : 0;
    at_least += w >= observed - 1e-9;
  }
  return at_least / std::pow(2.0, static_cast<double>(n));
}

TEST(SignedRank, EveryValueAboveIsTwoToTheMinusN) {
  EXPECT_DOUBLE_EQ(signed_rank_p_above({0.5, 0.6, 0.7, 0.8}, 0.1), 1.0 / 16);
  EXPECT_DOUBLE_EQ(signed_rank_smallest_p(4), 1.0 / 16);
  EXPECT_DOUBLE_EQ(signed_rank_p_above({-0.5, -0.6, -0.7, -0.8}, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(signed_rank_p_above({}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(signed_rank_p_above({0.1, 0.1}, 0.1), 1.0) << "values at the bound are dropped";
}

// Wilcoxon's table for n = 10, one-sided: W- <= 10 is significant at 5%, W- <= 11 is not
// (P 0.0420 and 0.0527); W- <= 3 at 0.5% (P 0.0049).
TEST(SignedRank, MatchesTheTableAtTenValues) {
  // Ranks 1..10; the negative ones sum to W-.
  auto with_negative = [](std::vector<int> neg) {
    std::vector<double> x;
    for (int r = 1; r <= 10; ++r) {
      bool is_neg = false;
      for (int k : neg) is_neg = is_neg || k == r;
      x.push_back(is_neg ? -r : r);
    }
    return x;
  };
  EXPECT_NEAR(signed_rank_p_above(with_negative({10}), 0), 0.0420, 5e-5);
  EXPECT_NEAR(signed_rank_p_above(with_negative({1, 10}), 0), 0.0527, 5e-5);
  EXPECT_NEAR(signed_rank_p_above(with_negative({3}), 0), 0.0049, 5e-5);
}

TEST(SignedRank, AgreesWithEnumerationWithTiesAndABound) {
  // Binary fractions, so that ties stay exact ties after the bound comes off.
  const std::vector<std::vector<double>> samples = {
      {0.125, 0.3125, -0.0625, 0.3125, 0.1875, 0.3125, -0.125, 0.4375},
      {0.375, 0.25, 0.25, 0.375, -0.25, 0.25, 0.5, -0.625, 0.375, 0.3125, 0.125, -0.125},
      {1, 1, 1, -1, -1, 2, 2, -2, 3},
  };
  for (const auto& x : samples)
    for (double bound : {0.0, 0.0625, 0.25})
      EXPECT_NEAR(signed_rank_p_above(x, bound), brute_force_p(x, bound), 1e-12) << "bound " << bound;
}

// The identical-builds false alarm of cases/generic-openai-llama-server.json (bench/README.md
// section 3): 8 of 10 blocks above the 17.3% bound, but two of the three largest departures below it.
TEST(SignedRank, TheGenericFalseAlarmIsNotConvincing) {
  std::vector<double> blocks;
  for (double pct : {49, 32, 26, 44, -25, 26, 74, -48, 50, 39}) blocks.push_back(std::log1p(pct / 100));
  const double p = signed_rank_p_above(blocks, std::log1p(0.173));
  EXPECT_NEAR(p, brute_force_p(blocks, std::log1p(0.173)), 1e-12);
  EXPECT_GT(p, 0.15);
  EXPECT_LT(p, 0.3);
}

TEST(SignedRank, ManyValuesStayFinite) {
  std::vector<double> x;
  for (int i = 1; i <= 200; ++i) x.push_back(i % 7 == 0 ? -i : i);
  const double p = signed_rank_p_above(x, 0);
  EXPECT_GT(p, 0);
  EXPECT_LT(p, 1e-20);
}

}  // namespace
}  // namespace fp
