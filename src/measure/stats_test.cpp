#include "measure/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

// Reference values from numpy 1.24 (np.percentile default method 'linear', np.std(ddof=1)) and
// scipy.stats.median_abs_deviation (raw, scale=1.0) on this exact vector.
const std::vector<double> kSamples = {12.5, 3.0, 7.25, 41.0, 9.5, 5.0, 18.0, 2.0, 11.0, 6.5};

TEST(StatsPercentile, MatchesNumpyLinear) {
  EXPECT_DOUBLE_EQ(percentile(kSamples, 0), 2.0);
  EXPECT_DOUBLE_EQ(percentile(kSamples, 25), 5.375);
  EXPECT_DOUBLE_EQ(percentile(kSamples, 50), 8.375);
  EXPECT_NEAR(percentile(kSamples, 90), 20.3, 1e-12);
  EXPECT_NEAR(percentile(kSamples, 95), 30.65, 1e-12);
  EXPECT_NEAR(percentile(kSamples, 99), 38.93, 1e-12);
  EXPECT_DOUBLE_EQ(percentile(kSamples, 100), 41.0);
  EXPECT_NEAR(percentile(kSamples, 33.3), 6.4955, 1e-12);
}

TEST(StatsPercentile, EdgeCases) {
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
  EXPECT_TRUE(std::isnan(percentile(kSamples, -1)));
  EXPECT_TRUE(std::isnan(percentile(kSamples, 100.5)));
  EXPECT_TRUE(std::isnan(percentile(kSamples, std::nan(""))));
  EXPECT_DOUBLE_EQ(percentile({7.0}, 99), 7.0);
  EXPECT_DOUBLE_EQ(percentile({1.0, 3.0}, 50), 2.0);
}

TEST(StatsSummarize, MatchesNumpy) {
  Summary s = summarize(kSamples);
  EXPECT_EQ(s.n, 10u);
  EXPECT_DOUBLE_EQ(s.median, 8.375);
  EXPECT_NEAR(s.p95, 30.65, 1e-12);
  EXPECT_NEAR(s.p99, 38.93, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 11.575);
  EXPECT_NEAR(s.stddev, 11.379837188837302, 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 41.0);
  EXPECT_DOUBLE_EQ(s.mad, 3.75);
}

TEST(StatsSummarize, EmptyGivesNaNsNotACrash) {
  Summary s = summarize({});
  EXPECT_EQ(s.n, 0u);
  for (double v : {s.median, s.p95, s.p99, s.mean, s.stddev, s.min, s.max, s.mad})
    EXPECT_TRUE(std::isnan(v));
}

TEST(StatsSummarize, SingleSample) {
  Summary s = summarize({4.5});
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.p99, 4.5);
  EXPECT_DOUBLE_EQ(s.stddev, 0.0);
  EXPECT_DOUBLE_EQ(s.mad, 0.0);
}

}  // namespace
}  // namespace fp
