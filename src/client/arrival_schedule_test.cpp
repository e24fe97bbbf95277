#include "client/arrival_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace fp {
namespace {

std::vector<double> gaps(const std::vector<double>& at) {
  std::vector<double> g;
  double prev = 0;
  for (double a : at) g.push_back(a - prev), prev = a;
  return g;
}

TEST(PoissonArrivals, MeanRateIsTheAskedRate) {
  for (double rate : {0.5, 4.0, 250.0}) {
    const auto at = poisson_arrivals(1000, rate, 42);
    ASSERT_EQ(at.size(), 1000u);
    // vLLM's rescaling: the last arrival at n/R, so n requests in n/R seconds.
    EXPECT_NEAR(at.back(), 1000 / rate, 1e-9 * 1000 / rate) << rate;
    EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
    EXPECT_GT(at.front(), 0.0);
  }
}

TEST(PoissonArrivals, GapsAreExponential) {
  // Exponential gaps: coefficient of variation 1, and P(gap < mean) = 1 - 1/e = 0.632. Evenly spaced
  // (CV 0) or bursty (CV >> 1) arrivals fail this.
  const double rate = 10;
  const auto g = gaps(poisson_arrivals(20000, rate, 7));
  double sum = 0, sq = 0;
  for (double x : g) sum += x, sq += x * x;
  const double mean = sum / g.size();
  const double sd = std::sqrt(sq / g.size() - mean * mean);
  EXPECT_NEAR(mean, 1 / rate, 1e-3);
  EXPECT_NEAR(sd / mean, 1.0, 0.03);
  const double below = std::count_if(g.begin(), g.end(), [&](double x) { return x < mean; }) / double(g.size());
  EXPECT_NEAR(below, 1 - std::exp(-1.0), 0.015);
  // Arrivals in one-second windows: Poisson counts, variance equal to the mean.
  const auto at = poisson_arrivals(20000, rate, 7);
  std::vector<int> per_s(static_cast<size_t>(at.back()) + 1, 0);
  for (double a : at) ++per_s[static_cast<size_t>(a)];
  per_s.pop_back();  // the last window is partial
  double m = 0, v = 0;
  for (int c : per_s) m += c;
  m /= per_s.size();
  for (int c : per_s) v += (c - m) * (c - m);
  v /= per_s.size() - 1;
  EXPECT_NEAR(v / m, 1.0, 0.1);
}

TEST(PoissonArrivals, SameSeedSameScheduleOtherSeedOther) {
  EXPECT_EQ(poisson_arrivals(50, 3, 11), poisson_arrivals(50, 3, 11));
  EXPECT_NE(poisson_arrivals(50, 3, 11), poisson_arrivals(50, 3, 12));
  // A seed's schedule is fixed across platforms and releases (computed independently in Python
  // from the splitmix64 reference and log1p).
  const auto at = poisson_arrivals(4, 2, 11);
  ASSERT_EQ(at.size(), 4u);
  EXPECT_NEAR(at[0], 0.31638598783347754, 1e-12);
  EXPECT_NEAR(at[1], 0.5696467335270184, 1e-12);
  EXPECT_NEAR(at[2], 1.4154084500347968, 1e-12);
  EXPECT_DOUBLE_EQ(at[3], 2.0);
}

TEST(PoissonArrivals, NoRateMeansAllAtOnce) {
  for (double rate : {0.0, -1.0, HUGE_VAL}) EXPECT_EQ(poisson_arrivals(3, rate, 1), std::vector<double>(3, 0.0));
  EXPECT_TRUE(poisson_arrivals(0, 5, 1).empty());
}

TEST(ArrivalSeed, DiffersByLevelAndRoundAndRepeats) {
  std::set<uint64_t> seen;
  for (int level : {1, 2, 8})
    for (int round = 0; round < 5; ++round) EXPECT_TRUE(seen.insert(arrival_seed(42, level, round)).second);
  EXPECT_EQ(arrival_seed(42, 2, 3), arrival_seed(42, 2, 3));
  EXPECT_NE(arrival_seed(42, 2, 3), arrival_seed(43, 2, 3));
}

}  // namespace
}  // namespace fp
