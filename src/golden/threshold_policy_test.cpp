#include "golden/threshold_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const FigurePolicy kLatency{Direction::lower_is_better, true, 0.05};
const FigurePolicy kRate{Direction::higher_is_better, true, 0.05};

LaunchSpread golden(double median, double mad, size_t n) { return LaunchSpread{median, mad, n}; }
LaunchSpread one_launch(double median) { return LaunchSpread{median, 0.0, 1}; }

TEST(ThresholdPolicy, LaunchSpreadIsMedianAndMadOfLaunchMedians) {
  LaunchSpread s = launch_spread({4, 1, 3, 100, 2});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.spread, 1);  // |x - 3| = 1, 2, 0, 97, 1 -> median 1
  EXPECT_EQ(s.n, 5u);
  LaunchSpread none = launch_spread({});
  EXPECT_EQ(none.n, 0u);
  EXPECT_TRUE(std::isnan(none.median));
}

TEST(ThresholdPolicy, ChangeWithinTheMinimumEffectPasses) {
  // sigma = 1.4826, noise = 3 * 1.4826 * sqrt(1/5 + 1/1) = 4.87 <= effect 5: this golden resolves 5%.
  ChangeJudgement j = judge_change(kLatency, golden(100, 1, 5), one_launch(104));
  EXPECT_EQ(j.status, FigureStatus::pass);
  EXPECT_DOUBLE_EQ(j.worse_by, 4);
  EXPECT_DOUBLE_EQ(j.effect, 5);
  EXPECT_NEAR(j.noise, 3 * kMadToSigma * std::sqrt(1.2), 1e-9);
  EXPECT_TRUE(j.resolves);
  EXPECT_TRUE(j.resolution.empty()) << j.resolution;
  EXPECT_THAT(j.facts, HasSubstr("golden median 100 (5 launches"));
  EXPECT_THAT(j.facts, HasSubstr("measured median 104 (1 launch)"));
  EXPECT_THAT(j.facts, HasSubstr("min effect 5%"));
}

TEST(ThresholdPolicy, WorseThanTheEffectAndTheNoiseRegresses) {
  ChangeJudgement j = judge_change(kLatency, golden(100, 1, 5), one_launch(110));
  EXPECT_EQ(j.status, FigureStatus::regressed);
  EXPECT_NEAR(j.worse_by_rel, 0.10, 1e-12);
  ChangeJudgement better = judge_change(kLatency, golden(100, 1, 5), one_launch(90));
  EXPECT_EQ(better.status, FigureStatus::improved);
}

TEST(ThresholdPolicy, NoiseAboveTheEffectIsUnresolvedAndSaysSo) {
  // Launch medians spread by MAD 5 (sigma 7.4%): a 10% change is within 3 sigma * sqrt(1.2) = 24%.
  ChangeJudgement j = judge_change(kLatency, golden(100, 5, 5), one_launch(110));
  EXPECT_EQ(j.status, FigureStatus::within_noise);
  EXPECT_FALSE(j.resolves);
  EXPECT_THAT(j.resolution, HasSubstr("this golden cannot resolve a 5% change: launch-to-launch spread is 7.41%"));
  EXPECT_THAT(j.resolution, HasSubstr("record more launches or use the side-by-side gate"));
  // Far enough out, even a noisy golden resolves the change.
  EXPECT_EQ(judge_change(kLatency, golden(100, 5, 5), one_launch(130)).status, FigureStatus::regressed);
}

TEST(ThresholdPolicy, NoNoiseStillNeedsTheMinimumEffect) {
  // Identical launch medians: noise 0, but 3% is below the 5% worth failing.
  EXPECT_EQ(judge_change(kLatency, golden(100, 0, 5), one_launch(103)).status, FigureStatus::pass);
  EXPECT_EQ(judge_change(kLatency, golden(100, 0, 5), one_launch(106)).status, FigureStatus::regressed);
  FigurePolicy strict = kLatency;
  strict.min_effect = MinEffect{0.02, 0};
  EXPECT_EQ(judge_change(strict, golden(100, 0, 5), one_launch(103)).status, FigureStatus::regressed);
  // A case may make a figure all but ungated: 1000% is said as such.
  FigurePolicy lenient = kLatency;
  lenient.min_effect = MinEffect{10, 0};
  ChangeJudgement j = judge_change(lenient, golden(100, 0, 5), one_launch(900));
  EXPECT_EQ(j.status, FigureStatus::pass);
  EXPECT_THAT(j.facts, HasSubstr("min effect 1000% (1000)"));
}

TEST(ThresholdPolicy, HigherIsBetterFlipsTheSign) {
  ChangeJudgement slower = judge_change(kRate, golden(800, 4, 5), one_launch(700));
  EXPECT_EQ(slower.status, FigureStatus::regressed);
  EXPECT_DOUBLE_EQ(slower.worse_by, 100);
  EXPECT_THAT(slower.facts, HasSubstr("higher is better"));
  EXPECT_EQ(judge_change(kRate, golden(800, 4, 5), one_launch(900)).status, FigureStatus::improved);
}

TEST(ThresholdPolicy, TooFewGoldenLaunchesNeverFail) {
  // One launch has no spread: the noise is unknown, and nothing beyond the effect is resolved.
  ChangeJudgement j = judge_change(kLatency, golden(100, 0, 1), one_launch(300));
  EXPECT_EQ(j.status, FigureStatus::within_noise);
  EXPECT_TRUE(std::isinf(j.noise));
  EXPECT_FALSE(j.resolves);
  EXPECT_THAT(j.resolution, HasSubstr("it holds 1 launch, too few for a launch-to-launch spread (at least 3)"));
  EXPECT_THAT(j.facts, HasSubstr("noise band unknown"));
  // Within the effect it still passes.
  EXPECT_EQ(judge_change(kLatency, golden(100, 0, 2), one_launch(101)).status, FigureStatus::pass);
}

TEST(ThresholdPolicy, MoreRunLaunchesNarrowTheBandAndTheirWiderSpreadCounts) {
  const double one = judge_change(kLatency, golden(100, 2, 5), one_launch(100)).noise;
  const double five = judge_change(kLatency, golden(100, 2, 5), LaunchSpread{100, 2, 5}).noise;
  EXPECT_NEAR(five / one, std::sqrt(0.4) / std::sqrt(1.2), 1e-9);
  // A run whose own launches spread wider than the golden's: its sigma is the one used.
  const double wide = judge_change(kLatency, golden(100, 2, 5), LaunchSpread{100, 8, 5}).noise;
  EXPECT_NEAR(wide, 3 * kMadToSigma * 8 * std::sqrt(0.4), 1e-9);
  // Two run launches are too few to estimate a spread: the golden's counts alone.
  const double two = judge_change(kLatency, golden(100, 2, 5), LaunchSpread{100, 8, 2}).noise;
  EXPECT_NEAR(two, 3 * kMadToSigma * 2 * std::sqrt(0.7), 1e-9);
}

TEST(ThresholdPolicy, RegressionLimitIsWhereAOneLaunchRunStartsToFail) {
  EXPECT_DOUBLE_EQ(regression_limit(kLatency, golden(100, 0, 5), 1), 105);
  const double noisy = regression_limit(kLatency, golden(100, 2, 5), 1);
  EXPECT_NEAR(noisy, 100 + 3 * kMadToSigma * 2 * std::sqrt(1.2), 1e-9);
  EXPECT_DOUBLE_EQ(regression_limit(kRate, golden(800, 0, 5), 1), 760);
  EXPECT_TRUE(std::isnan(regression_limit(kLatency, golden(100, 0, 2), 1)));
  // Just past the limit regresses; at the limit it does not.
  EXPECT_EQ(judge_change(kLatency, golden(100, 2, 5), one_launch(noisy + 1e-6)).status, FigureStatus::regressed);
  EXPECT_NE(judge_change(kLatency, golden(100, 2, 5), one_launch(noisy - 1e-6)).status, FigureStatus::regressed);
}

TEST(ThresholdPolicy, FindPolicyMatchesNameOrPrefixLongestWins) {
  std::map<std::string, FigurePolicy> p = {{"ttft_ms", kLatency}, {"ttft_ms_p99", kRate}};
  ASSERT_NE(find_policy("ttft_ms", p), nullptr);
  EXPECT_EQ(find_policy("ttft_ms_p95", p)->direction, Direction::lower_is_better);
  EXPECT_EQ(find_policy("ttft_ms_p99", p)->direction, Direction::higher_is_better);
  EXPECT_EQ(find_policy("ttftx_ms", p), nullptr);
}

TEST(ThresholdPolicy, StatusNames) {
  EXPECT_STREQ(to_string(FigureStatus::within_noise), "within_noise");
  EXPECT_STREQ(to_string(FigureStatus::new_figure), "new");
  EXPECT_THAT(std::string(to_string(FigureStatus::regressed)), Not(HasSubstr(" ")));
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

TEST(ThresholdPolicy, KernelSharesAreJudgedInPointsWithTheGoldensNoise) {
  // Golden: 5 probed launches, share 0.60, MAD 0.005 -> sigma 0.0074, noise 3 * 0.0074 * sqrt(1/5 + 1/1) = 0.024.
  const LaunchSpread g{0.60, 0.005, 5};
  ShareJudgement same = judge_share(g, LaunchSpread{0.63, 0.0, 1}, true, true);
  EXPECT_EQ(same.status, ShareStatus::same);
  EXPECT_NEAR(same.change, 0.03, 1e-12);
  EXPECT_TRUE(same.resolves);
  EXPECT_EQ(judge_share(g, LaunchSpread{0.50, 0.0, 1}, true, true).status, ShareStatus::moved);
  // Two golden launches: no spread, so a 10-point move is within noise, not a failure.
  ShareJudgement unknown = judge_share(LaunchSpread{0.60, 0.0, 2}, LaunchSpread{0.50, 0.0, 1}, true, true);
  EXPECT_EQ(unknown.status, ShareStatus::within_noise);
  EXPECT_TRUE(std::isinf(unknown.noise));
  EXPECT_FALSE(unknown.resolves);
  // Lost and new need no noise band.
  EXPECT_EQ(judge_share(LaunchSpread{0.02, 0.0, 2}, LaunchSpread{0.0, 0.0, 1}, true, false).status, ShareStatus::lost);
  ShareJudgement fresh = judge_share(LaunchSpread{0.0, 0.0, 2}, LaunchSpread{0.88, 0.0, 1}, false, true);
  EXPECT_EQ(fresh.status, ShareStatus::appeared);
  EXPECT_NEAR(fresh.change, 0.88, 1e-12);
  EXPECT_STREQ(to_string(ShareStatus::appeared), "new");
}

// The effect is max(relative x golden median, floor); the band's source is said.
TEST(ThresholdPolicy, TheFloorDecidesTheEffectOfASmallFigure) {
  const FigurePolicy p{Direction::lower_is_better, true, MinEffect{0.05, 1.0}};
  ChangeJudgement j = judge_change(p, golden(8, 0.01, 5), one_launch(8.6));
  EXPECT_DOUBLE_EQ(j.effect, 1.0);
  EXPECT_TRUE(j.floor_in_force);
  EXPECT_EQ(j.status, FigureStatus::pass);  // +7.5% of 8 ms is 0.6 ms: below the 1 ms floor
  EXPECT_THAT(j.facts, HasSubstr("min effect 5%, floor 1 (1: the floor)"));
  EXPECT_EQ(j.band, "launches: 5 launches of the golden");
  ChangeJudgement big = judge_change(p, golden(100, 0.5, 5), one_launch(106));
  EXPECT_DOUBLE_EQ(big.effect, 5.0);
  EXPECT_FALSE(big.floor_in_force);
  EXPECT_EQ(big.status, FigureStatus::regressed);
  LaunchSpread rounds = golden(100, 0.5, 7);
  rounds.source = BandSource::rounds;
  EXPECT_EQ(judge_change(p, rounds, one_launch(100)).band, "rounds: 7 rounds of the golden");
  // A guard is judged the same way at its guard effect, and says so.
  const FigurePolicy guard{Direction::lower_is_better, false, MinEffect{0.25, 0.05}, true};
  ChangeJudgement g = judge_change(guard, golden(5, 0.01, 5), one_launch(10));
  EXPECT_TRUE(g.guard);
  EXPECT_EQ(g.status, FigureStatus::regressed);
  EXPECT_THAT(g.facts, HasSubstr("guard effect 25%, floor 0.05"));
}

}  // namespace
}  // namespace fp
