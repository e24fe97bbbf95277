#include "flow/ab/mechanism.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

std::vector<double> around(double center, double spread, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center + spread * ((i % 5) - 2) / 2.0);
  return v;
}

AbFigure figure(const std::string& name, bool lower_is_better, const std::vector<double>& off, const std::vector<double>& on) {
  AbFigure f;
  f.name = name;
  f.lower_is_better = lower_is_better;
  f.cmp = compare_ab(off, on);
  f.effect = effect_of(f.cmp, lower_is_better);
  return f;
}

MechanismStatement say(const std::string& figure, const std::string& expect, double at_least = 0, double tolerance = 0.05) {
  MechanismStatement s;
  s.figure = figure;
  for (MechanismExpect e :
       {MechanismExpect::faster, MechanismExpect::slower, MechanismExpect::higher, MechanismExpect::lower, MechanismExpect::unchanged})
    if (expect == to_string(e)) s.expect = e;
  s.at_least = at_least;
  s.tolerance = tolerance;
  return s;
}

TEST(Mechanism, FasterFollowsTheFiguresDirection) {
  // Prompt throughput up 60% (higher is better), TTFT down 37% (lower is better): both "faster".
  std::vector<AbFigure> figs = {figure("prompt_tokens_per_s", false, around(1000, 20, 10), around(1600, 20, 10)),
                                figure("ttft_ms", true, around(100, 2, 10), around(63, 2, 10))};
  auto out = check_mechanism({say("prompt_tokens_per_s", "faster", 0.2), say("ttft_ms", "faster", 0.2)}, figs);
  ASSERT_EQ(out.checks.size(), 2u);
  EXPECT_EQ(out.checks[0].outcome, MechanismVerdict::confirmed) << out.checks[0].detail;
  EXPECT_EQ(out.checks[1].outcome, MechanismVerdict::confirmed) << out.checks[1].detail;
  EXPECT_TRUE(out.unpredicted.empty());
}

TEST(Mechanism, SmallerThanStatedAndContradicted) {
  std::vector<AbFigure> figs = {figure("prompt_tokens_per_s", false, around(1000, 10, 10), around(1050, 10, 10)),
                                figure("ttft_ms", true, around(100, 2, 10), around(120, 2, 10))};
  auto out = check_mechanism({say("prompt_tokens_per_s", "faster", 0.2), say("ttft_ms", "faster")}, figs);
  EXPECT_EQ(out.checks[0].outcome, MechanismVerdict::smaller_than_stated);
  EXPECT_THAT(out.checks[0].detail, HasSubstr("+5.0%"));
  EXPECT_EQ(out.checks[1].outcome, MechanismVerdict::contradicted);
  EXPECT_THAT(out.checks[1].detail, HasSubstr("other way"));
}

TEST(Mechanism, NotShownWhenWithinNoiseSaysHowManyWouldBeNeeded) {
  std::vector<AbFigure> figs = {figure("decode_tokens_per_s", false, {100, 120, 90}, {110, 95, 125})};
  auto out = check_mechanism({say("decode_tokens_per_s", "faster", 0.1)}, figs);
  EXPECT_EQ(out.checks[0].outcome, MechanismVerdict::not_shown);
  EXPECT_THAT(out.checks[0].detail, HasSubstr("too few samples"));
}

TEST(Mechanism, UnchangedNeedsTheIntervalInsideTheTolerance) {
  // Deterministic KV size: identical in both arms -> confirmed.
  std::vector<AbFigure> figs = {figure("kv_cache_mib", true, {64, 64, 64, 64, 64}, {64, 64, 64, 64, 64}),
                                // noisy, within noise, but the interval allows +-20%: not shown
                                figure("tpot_ms", true, {10, 12, 8, 11, 9}, {9, 12, 11, 8, 10}),
                                // a clear 30% change: contradicted
                                figure("itl_ms", true, around(10, 0.2, 10), around(13, 0.2, 10))};
  auto out = check_mechanism({say("kv_cache_mib", "unchanged"), say("tpot_ms", "unchanged"), say("itl_ms", "unchanged")}, figs);
  EXPECT_EQ(out.checks[0].outcome, MechanismVerdict::confirmed) << out.checks[0].detail;
  EXPECT_EQ(out.checks[1].outcome, MechanismVerdict::not_shown) << out.checks[1].detail;
  EXPECT_EQ(out.checks[2].outcome, MechanismVerdict::contradicted) << out.checks[2].detail;
}

TEST(Mechanism, HigherAndLowerAreAboutTheRawValue) {
  std::vector<AbFigure> figs = {figure("compute_buffer_mib", true, around(300, 1, 10), around(200, 1, 10))};
  EXPECT_EQ(check_mechanism({say("compute_buffer_mib", "lower", 0.2)}, figs).checks[0].outcome, MechanismVerdict::confirmed);
  EXPECT_EQ(check_mechanism({say("compute_buffer_mib", "higher")}, figs).checks[0].outcome, MechanismVerdict::contradicted);
}

TEST(Mechanism, UnpredictedDifferencesAreNamedHarnessFiguresAreNot) {
  std::vector<AbFigure> figs = {figure("ttft_ms", true, around(100, 2, 10), around(60, 2, 10)),
                                figure("itl_ms", true, around(10, 0.2, 10), around(8, 0.2, 10)),
                                figure("e2e_ms", true, {100, 120, 90}, {110, 95, 125}),
                                figure("client_minus_server_prompt_ms", true, around(1, 0.01, 10), around(2, 0.01, 10))};
  auto out = check_mechanism({say("ttft_ms", "faster")}, figs);
  ASSERT_EQ(out.unpredicted.size(), 1u);
  EXPECT_THAT(out.unpredicted[0], HasSubstr("itl_ms"));
  EXPECT_THAT(out.unpredicted[0], HasSubstr("better with the flag on"));
}

TEST(Mechanism, AStatementAboutAFigureNotMeasured) {
  auto out = check_mechanism({say("sustained_ttft_ms", "unchanged")}, {});
  EXPECT_EQ(out.checks[0].outcome, MechanismVerdict::not_measured);
}

}  // namespace
}  // namespace fp
