#include "measure/paired_stats.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

namespace fp {
namespace {

TEST(StudentT, QuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302653, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228139, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.5, 7), 0.0, 1e-6);
  EXPECT_NEAR(student_t_cdf(2.228139, 10), 0.975, 1e-6);
  EXPECT_NEAR(student_t_cdf(-1.0, 1), 0.25, 1e-9);  // Cauchy
}

TEST(Holm, AdjustsStepDown) {
  // m = 3: sorted 0.01, 0.02, 0.04 -> 0.03, 0.04, 0.04 (monotone).
  auto a = holm_adjust({0.04, 0.01, 0.02});
  EXPECT_NEAR(a[1], 0.03, 1e-12);
  EXPECT_NEAR(a[2], 0.04, 1e-12);
  EXPECT_NEAR(a[0], 0.04, 1e-12);
  auto b = holm_adjust({0.5, kNoValue});
  EXPECT_NEAR(b[0], 0.5, 1e-12);
  EXPECT_TRUE(std::isnan(b[1]));
}

std::vector<PairedUnit> exact_units(int blocks, double ratio) {
  std::vector<PairedUnit> u;
  for (int k = 0; k < blocks; ++k)
    for (const char* p : {"p1", "p2", "p3"}) u.push_back({k, k % 2 == 0, p, 100.0, 100.0 * ratio});
  return u;
}

TEST(PairedEstimate, ExactRatioAndDirection) {
  PairedEstimate e = estimate_paired(exact_units(4, 1.05), true);
  EXPECT_EQ(e.blocks, 4u);
  EXPECT_EQ(e.units, 12u);
  EXPECT_NEAR(e.worse_rel(), 0.05, 1e-12);
  EXPECT_NEAR(e.low_rel(), 0.05, 1e-12);
  EXPECT_EQ(e.se_log, 0.0);
  // Throughput 5% higher in B is better: worse by -4.76%.
  PairedEstimate h = estimate_paired(exact_units(4, 1.05), false);
  EXPECT_NEAR(h.worse_rel(), 1 / 1.05 - 1, 1e-12);
}

TEST(PairedEstimate, IgnoresUnusableUnitsAndNeedsTwoBlocks) {
  std::vector<PairedUnit> u = {{0, true, "p", 100, 110}, {0, true, "q", kNoValue, 1}, {0, true, "r", 0, 5}};
  PairedEstimate e = estimate_paired(u, true);
  EXPECT_EQ(e.units, 1u);
  EXPECT_EQ(e.blocks, 1u);
  EXPECT_TRUE(std::isnan(e.se_log));
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}}, LookSchedule(4, 200));
  EXPECT_EQ(d[0].verdict, TimingVerdict::unresolved);
}

const LookSchedule kGate(4, kDefaultBudgetBlocks);

// The looks of the gate's default budget: 4, 6, 8, 12, 16, 24, 32, 40, eight in all, each at
// kAlphaRegression / 8 and kAlphaNoRegression / 8; a budget of 150 blocks (the floor at 1.2 s a block) twelve; A/B with a fixed number of
// blocks looks once, at the whole levels.
TEST(LookSchedule, FixedAtTheFirstLookAndTheLevelSplitAcrossIt) {
  EXPECT_EQ(kGate.looks, (std::vector<int>{4, 6, 8, 12, 16, 24, 32, 40}));
  EXPECT_DOUBLE_EQ(kGate.alpha_regression, kAlphaRegression / 8);
  EXPECT_DOUBLE_EQ(kGate.alpha_no_regression, kAlphaNoRegression / 8);
  EXPECT_EQ(LookSchedule(4, 151).looks, (std::vector<int>{4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 150}));
  EXPECT_EQ(LookSchedule(6, 6).looks, std::vector<int>{6});
  EXPECT_DOUBLE_EQ(LookSchedule(6, 6).alpha_regression, kAlphaRegression);
  EXPECT_EQ(LookSchedule(5, 16).looks, (std::vector<int>{6, 8, 12, 16})) << "the first look even, the schedule's own after it";
  EXPECT_EQ(LookSchedule(2, 8).looks, (std::vector<int>{4, 6, 8})) << "never before 4 blocks: two degrees of freedom";
  EXPECT_TRUE(LookSchedule(2, 3).looks.empty());
  EXPECT_EQ(kGate.next_after(0), 4);
  EXPECT_EQ(first_look(5), 6);
  EXPECT_EQ(kGate.next_after(12), 16);
  EXPECT_EQ(kGate.next_after(13), 16);
  EXPECT_FALSE(kGate.next_after(40));
  EXPECT_TRUE(kGate.is_look(24));
  EXPECT_FALSE(kGate.is_look(10));
}

// Least squares of the block values on the launch position, worked by hand: blocks 0.02, 0.00, 0.03,
// 0.01 with A first in blocks 1 and 3: theta = 0.015 (the mean, the orders balanced), gamma = 0.01,
// residuals -0.005, -0.005, +0.005, +0.005: sd = sqrt(1e-4 / 2), se = sd / 2, 2 degrees of freedom.
TEST(PairedEstimate, LeastSquaresWithThePositionTermByHand) {
  const double d[] = {0.02, 0.00, 0.03, 0.01};
  std::vector<PairedUnit> u;
  for (int k = 0; k < 4; ++k) u.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(d[k])});
  const PairedEstimate e = estimate_paired(u, true);
  EXPECT_EQ(e.df, 2);
  EXPECT_NEAR(e.worse_log, 0.015, 1e-12);
  EXPECT_NEAR(e.order_log, 0.01, 1e-12);
  EXPECT_NEAR(e.block_sd_log, std::sqrt(1e-4 / 2), 1e-12);
  EXPECT_NEAR(e.se_log, std::sqrt(1e-4 / 2) / 2, 1e-12);
  EXPECT_NEAR(e.block_values[0].residual, -0.005, 1e-12);
  EXPECT_NEAR(e.high_log, 0.015 + student_t_quantile(0.975, 2) * e.se_log, 1e-12);
  // Unbalanced (an odd block between looks): the general solution, the same model.
  u.push_back({4, true, "p", 100, 100 * std::exp(0.04)});
  const PairedEstimate odd = estimate_paired(u, true);
  EXPECT_EQ(odd.df, 3);
  EXPECT_TRUE(std::isfinite(odd.se_log));
}

// gate:same-build in a fresh clone (2026-12-01): the same build on both sides, TTFT per launch and
// prompt over four blocks, the candidate 1.5-6% slower in each block. Four blocks are too few to tell
// that from chance: it stays open.
TEST(PairedEstimate, FourSameSignBlocksAreNotARegression) {
  const double base[4][3] = {{938.6, 809.1, 743.6}, {941.8, 814.7, 744.6}, {972.2, 833.9, 764.2}, {961.3, 825.5, 747.7}};
  const double cand[4][3] = {{962.7, 879.6, 810.6}, {953.3, 834.4, 745.8}, {1022.7, 829.6, 866.1}, {1008.7, 819.1, 772.1}};
  std::vector<PairedUnit> u;
  for (int k = 0; k < 4; ++k)
    for (int p = 0; p < 3; ++p) u.push_back({k, k % 2 == 0, "p" + std::to_string(p), base[k][p], cand[k][p]});
  EXPECT_EQ(estimate_paired(u, true).df, 2);
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}}, kGate);
  EXPECT_EQ(d[0].verdict, TimingVerdict::unresolved) << decision_line(d[0]);
}

TEST(PairedEstimate, PositionEffectIsAbsorbed) {
  // The second launch of every block is 3% slower; A and B are the same build.
  std::vector<PairedUnit> u;
  for (int k = 0; k < 8; ++k) {
    const bool a_first = k % 2 == 0;
    const double jitter = 1 + 0.001 * ((k * 7) % 5);
    u.push_back({k, a_first, "p", 100 * (a_first ? 1.0 : 1.03) * jitter, 100 * (a_first ? 1.03 : 1.0) * jitter});
  }
  PairedEstimate e = estimate_paired(u, true);
  EXPECT_NEAR(e.worse_log, 0.0, 1e-12);
  EXPECT_NEAR(e.order_log, std::log(1.03), 1e-12);
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}}, kGate);
  EXPECT_EQ(d[0].verdict, TimingVerdict::no_regression) << decision_line(d[0]);
}

// The machine reference is reported beside the estimate, never taken out of it: a build whose own
// work slows the reference in its launches would otherwise have its slowdown explained away.
TEST(PairedEstimate, TheMachineReferenceIsReportedNotFitted) {
  std::vector<PairedUnit> u, plain;
  for (int k = 0; k < 8; ++k) {
    const double x = 0.05 + 0.01 * ((k * 7) % 4);
    u.push_back({k, k % 2 == 0, "", 100, 100 * std::exp(1.5 * x), 5.0, 5.0 * std::exp(x)});
    plain.push_back({k, k % 2 == 0, "", 100, 100 * std::exp(1.5 * x)});
  }
  const PairedEstimate e = estimate_paired(u, true), p = estimate_paired(plain, true);
  EXPECT_DOUBLE_EQ(e.worse_log, p.worse_log);
  EXPECT_DOUBLE_EQ(e.se_log, p.se_log);
  EXPECT_NEAR(e.machine_log, 0.065, 1e-9);
  EXPECT_NEAR(e.block_values[2].machine, 0.05 + 0.01 * (14 % 4), 1e-12);
}

// The run (cases/completion-realistic-long.json, identical builds, 2026-12-01): seven blocks
// within +-1.5% and block 2 at -15.0%, a launch of the whole machine in a burst. Least squares takes
// the burst into the spread: not decided after 8 blocks (the trimmed mean of the procedure before
// docs/gate-design.md decided there), and never a regression either way round; with 8 more quiet
// blocks it decides.
TEST(PairedEstimate, OneBurstBlockWidensTheIntervalAndDecidesNothing) {
  const double d[] = {0.012, -0.150, -0.008, 0.004, 0.013, -0.011, 0.006, -0.003};
  std::vector<PairedUnit> u;
  for (int k = 0; k < 8; ++k) u.push_back({k, k % 2 == 0, "p", 1000, 1000 * std::exp(d[k])});
  EXPECT_EQ(decide_figures({{"ttft_ms", true, 0.05, u}}, kGate)[0].verdict, TimingVerdict::unresolved);
  std::vector<PairedUnit> mirrored = u;
  for (auto& x : mirrored) std::swap(x.a, x.b);
  EXPECT_NE(decide_figures({{"ttft_ms", true, 0.05, mirrored}}, kGate)[0].verdict, TimingVerdict::regression);
  for (int k = 8; k < 16; ++k) u.push_back({k, k % 2 == 0, "p", 1000, 1000 * std::exp(d[k % 8 == 1 ? 0 : k % 8])});
  const auto sixteen = decide_figures({{"ttft_ms", true, 0.05, u}}, kGate);
  EXPECT_EQ(sixteen[0].verdict, TimingVerdict::no_regression) << decision_line(sixteen[0]);
}

// The identical-builds false alarm of cases/generic-openai-llama-server.json under the procedure
// before docs/gate-design.md (bench/README.md section 3): ten blocks, eight beyond the 17.3%
// regression bound of its 28.9% floor, two far below. Least squares at the 8- and 12-block looks (10
// blocks: between them, here decided for the record) calls none of it a regression.
TEST(Decision, TheGenericOpenAiFalseAlarmIsNotARegression) {
  std::vector<PairedUnit> u;
  const double pct[] = {48.6, 32.0, 25.8, 44.5, -24.9, 26.4, 74.4, -48.0, 49.6, 39.1};
  const bool baseline_first[] = {true, false, false, true, true, false, false, true, true, false};
  for (int k = 0; k < 10; ++k) u.push_back({k, baseline_first[k], "", 100, 100 * (1 + pct[k] / 100)});
  const auto d = decide_figures({{"ttft_ms", true, 0.289, u}}, kGate);
  EXPECT_NE(d[0].verdict, TimingVerdict::regression) << decision_line(d[0]);
  std::printf("  %s\n", decision_line(d[0]).c_str());
  // Four blocks, every one 50% worse (the spread 1%): the first look decides.
  std::vector<PairedUnit> four;
  for (int k = 0; k < 4; ++k) four.push_back({k, k % 2 == 0, "", 100, 150.0 + k});
  const auto caught = decide_figures({{"ttft_ms", true, 0.05, four}}, kGate);
  EXPECT_EQ(caught[0].verdict, TimingVerdict::regression) << decision_line(caught[0]);
}

// A true change below 60% of the minimum effect is not a regression, however clear.
TEST(Decision, SmallTrueChangeIsNotARegression) {
  std::vector<PairedUnit> u;
  for (int k = 0; k < 32; ++k) u.push_back({k, k % 2 == 0, "p", 100, 100 * 1.025 * std::exp(0.002 * ((k * 7) % 5 - 2))});
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}}, kGate);
  EXPECT_EQ(d[0].verdict, TimingVerdict::no_regression) << decision_line(d[0]);
  EXPECT_EQ(d[0].why, "slower, but by less than the minimum effect");
}

TEST(Decision, UnresolvedSaysAtWhichLookItWouldLikelySettle) {
  std::vector<PairedUnit> u;
  const double noise[] = {0.06, -0.05, 0.09, -0.03};
  for (int k = 0; k < 4; ++k) u.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(0.01 + noise[k])});
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}}, kGate);
  ASSERT_EQ(d[0].verdict, TimingVerdict::unresolved) << decision_line(d[0]);
  ASSERT_TRUE(d[0].likely_blocks.has_value());
  EXPECT_TRUE(kGate.is_look(*d[0].likely_blocks));
  EXPECT_GT(*d[0].likely_blocks, 4);
  EXPECT_NE(decision_line(d[0]).find("more blocks would likely settle it"), std::string::npos);
}

TEST(Decision, HolmProtectsTheFamily) {
  // Two figures with the same evidence: together each one's p is at least what it is alone.
  std::vector<PairedUnit> a, b;
  const double na[] = {0.10, 0.00, 0.09, 0.01, 0.08, 0.02};
  for (int k = 0; k < 6; ++k) {
    a.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(na[k])});
    b.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(na[5 - k])});
  }
  auto alone = decide_figures({{"x", true, 0.05, a}}, kGate);
  auto both = decide_figures({{"x", true, 0.05, a}, {"y", true, 0.05, b}}, kGate);
  EXPECT_GE(both[0].p_holm, alone[0].p_holm);
  EXPECT_DOUBLE_EQ(both[0].alpha_regression, kGate.alpha_regression);
}

}  // namespace
}  // namespace fp
