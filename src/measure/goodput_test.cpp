#include "measure/goodput.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

LatencyTargets targets(double ttft, double tpot, double e2e) {
  LatencyTargets t;
  t.ttft_ms = ttft;
  t.tpot_ms = tpot;
  t.e2e_ms = e2e;
  return t;
}

TEST(Goodput, ShareAndRateOfRequestsMeetingEveryTarget) {
  const LatencyTargets t = targets(100, 10, kNoValue);
  const std::vector<RequestLatency> reqs = {
      {50, 5, 900},    // good: e2e has no target
      {100, 10, 1},    // good: at the target counts (vLLM: slo >= value)
      {101, 5, 1},     // TTFT over
      {50, 10.5, 1},   // TPOT over
  };
  const Goodput g = goodput(reqs, t, 2.0);
  EXPECT_EQ(g.requests, 4u);
  EXPECT_EQ(g.good, 2u);
  EXPECT_DOUBLE_EQ(g.share, 0.5);
  EXPECT_DOUBLE_EQ(g.per_s, 1.0);  // 2 good requests in 2 s
}

TEST(Goodput, UnmeasuredTargetedFigureIsNotMet) {
  const LatencyTargets t = targets(kNoValue, 10, kNoValue);
  EXPECT_FALSE(meets_targets({5, kNoValue, 5}, t));
  EXPECT_TRUE(meets_targets({kNoValue, 0, kNoValue}, t));  // one output token: TPOT 0, as vLLM counts it
}

TEST(Goodput, NoRequestsOrNoDurationGiveNoValue) {
  const Goodput none = goodput({}, targets(1, 1, 1), 1.0);
  EXPECT_EQ(none.requests, 0u);
  EXPECT_TRUE(std::isnan(none.share));
  EXPECT_DOUBLE_EQ(none.per_s, 0.0);
  const Goodput no_time = goodput({{1, 1, 1}}, targets(1, 1, 1), 0.0);
  EXPECT_DOUBLE_EQ(no_time.share, 1.0);
  EXPECT_TRUE(std::isnan(no_time.per_s));
}

TEST(Goodput, TargetsInWords) {
  EXPECT_EQ(targets(500, 50, kNoValue).text(), "ttft_ms <= 500; tpot_ms <= 50");
  EXPECT_FALSE(LatencyTargets{}.any());
  EXPECT_TRUE(targets(kNoValue, kNoValue, 2000).any());
}

}  // namespace
}  // namespace fp
