#include "golden/compare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

GoldenFigure ttft(double median, double mad, size_t n) {
  return {median, mad, n, Direction::lower_is_better, 0.10, 1.0, true};
}

Golden golden_with(const std::string& name, GoldenFigure f) {
  Golden g;
  g.fingerprint = "test-machine";
  g.figures[name] = f;
  return g;
}

const FigureComparison& only(const Result<Comparison>& r) {
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r->figures.size(), 1u);
  return r->figures.at(0);
}

TEST(GoldenCompare, PassWithinTolerance) {
  // Golden 100 ms, tolerance max(10% x 100, 1) = 10; measured median 105: worse by 5, passes.
  auto r = compare_to_golden(golden_with("ttft_ms_p95", ttft(100, 1, 9)),
                             {{"ttft_ms_p95", {104, 105, 106, 105, 105}}});
  const FigureComparison& c = only(r);
  EXPECT_EQ(c.status, FigureStatus::pass) << c.message;
  EXPECT_FALSE(c.failed);
  EXPECT_FALSE(r->failed());
  EXPECT_DOUBLE_EQ(c.worse_by, 5.0);
  EXPECT_DOUBLE_EQ(c.tolerance, 10.0);
}

TEST(GoldenCompare, RegressedMessage) {
  auto r = compare_to_golden(golden_with("ttft_ms_p95", ttft(100, 1, 9)),
                             {{"ttft_ms_p95", {124, 125, 126, 125, 125}}});
  const FigureComparison& c = only(r);
  EXPECT_EQ(c.status, FigureStatus::regressed) << c.message;
  EXPECT_TRUE(c.failed);
  EXPECT_TRUE(r->failed());
  EXPECT_DOUBLE_EQ(c.worse_by, 25.0);
  EXPECT_DOUBLE_EQ(c.worse_by_rel, 0.25);
  // noise = 3 * sqrt((1.2533 * 1.4826 * 1 / 3)^2 + (1.2533 * 1.4826 * 0 / sqrt(5))^2) = 1.85817
  EXPECT_NEAR(c.noise, 3 * 1.2533141373155003 * 1.482602218505602 / 3.0, 1e-12);
  EXPECT_EQ(c.message,
            "ttft_ms_p95: regressed: worse by 25 (25%): golden median 100, measured median 125 (n=5), "
            "tolerance 10 (max(0.1 x 100, 1)), noise band 1.85817, lower is better");
}

TEST(GoldenCompare, HigherIsBetterDirection) {
  GoldenFigure tps{800, 5, 9, Direction::higher_is_better, 0.10, 1.0, true};
  auto low = compare_to_golden(golden_with("tokens_per_s_median", tps), {{"tokens_per_s_median", {600, 610, 590}}});
  EXPECT_EQ(only(low).status, FigureStatus::regressed) << only(low).message;
  EXPECT_NE(only(low).message.find("worse by 200 (25%)"), std::string::npos) << only(low).message;
  auto high = compare_to_golden(golden_with("tokens_per_s_median", tps), {{"tokens_per_s_median", {1000, 1010, 990}}});
  EXPECT_EQ(only(high).status, FigureStatus::improved) << only(high).message;
  EXPECT_FALSE(high->failed());
}

TEST(GoldenCompare, BeyondToleranceButWithinNoiseIsNotAFailure) {
  // Worse by 15 > tolerance 10, but both the golden and this run scatter by MAD 20 over 3 samples:
  // noise = 3 * sqrt(2) * 1.2533 * 1.4826 * 20 / sqrt(3) = 91: not distinguishable.
  auto r = compare_to_golden(golden_with("ttft_ms_p95", ttft(100, 20, 3)),
                             {{"ttft_ms_p95", {95, 115, 140}}});
  const FigureComparison& c = only(r);
  EXPECT_EQ(c.status, FigureStatus::within_noise) << c.message;
  EXPECT_FALSE(c.failed);
  EXPECT_NE(c.message.find("worse by 15 (15%)"), std::string::npos) << c.message;
  // The same shift with tight samples is a regression.
  auto tight = compare_to_golden(golden_with("ttft_ms_p95", ttft(100, 0.5, 9)),
                                 {{"ttft_ms_p95", {114.5, 115, 115.5}}});
  EXPECT_EQ(only(tight).status, FigureStatus::regressed) << only(tight).message;
}

TEST(GoldenCompare, TinyValuesUseTheAbsoluteFloor) {
  // Golden 0.2 ms, 10% would allow only 0.02 ms; the floor of 1 ms allows 0.8 ms more.
  auto r = compare_to_golden(golden_with("itl_ms_median", ttft(0.2, 0, 9)), {{"itl_ms_median", {0.9, 0.9, 0.9}}});
  EXPECT_EQ(only(r).status, FigureStatus::pass) << only(r).message;
  EXPECT_DOUBLE_EQ(only(r).tolerance, 1.0);
  auto over = compare_to_golden(golden_with("itl_ms_median", ttft(0.2, 0, 9)), {{"itl_ms_median", {1.5, 1.5, 1.5}}});
  EXPECT_EQ(only(over).status, FigureStatus::regressed) << only(over).message;
  EXPECT_NE(only(over).message.find("worse by 1.3 (650%)"), std::string::npos) << only(over).message;
  // A golden median of 0: relative change is n/a, the floor still decides.
  auto zero = compare_to_golden(golden_with("cpu_fallback_ops", ttft(0, 0, 9)), {{"cpu_fallback_ops", {2, 2, 2}}});
  EXPECT_EQ(only(zero).status, FigureStatus::regressed) << only(zero).message;
  EXPECT_TRUE(std::isnan(only(zero).worse_by_rel));
}

TEST(GoldenCompare, NewAndMissing) {
  Golden g = golden_with("ttft_ms_p95", ttft(100, 1, 9));
  g.figures["host_peak_mib"] = {900, 5, 9, Direction::lower_is_better, 0.1, 1, false};
  auto r = compare_to_golden(g, {{"tpot_ms_median", {12, 13}}, {"host_peak_mib", {}}});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->figures.size(), 3u);
  EXPECT_EQ(r->figures[0].name, "host_peak_mib");
  EXPECT_EQ(r->figures[0].status, FigureStatus::missing);
  EXPECT_FALSE(r->figures[0].failed);  // not gated
  EXPECT_EQ(r->figures[1].name, "ttft_ms_p95");
  EXPECT_EQ(r->figures[1].status, FigureStatus::missing);
  EXPECT_TRUE(r->figures[1].failed);   // gated: no evidence is not a pass
  EXPECT_EQ(r->figures[2].name, "tpot_ms_median");
  EXPECT_EQ(r->figures[2].status, FigureStatus::new_figure);
  EXPECT_FALSE(r->figures[2].failed);
  EXPECT_TRUE(r->failed());
}

TEST(GoldenCompare, NonFiniteSamplesAreMissingNotPass) {
  auto r = compare_to_golden(golden_with("ttft_ms_p95", ttft(100, 1, 9)),
                             {{"ttft_ms_p95", {100, std::nan(""), 100}}});
  EXPECT_EQ(only(r).status, FigureStatus::missing);
  EXPECT_TRUE(only(r).failed);
}

TEST(GoldenCompare, DuplicateMeasuredIsAnError) {
  auto r = compare_to_golden(golden_with("a", ttft(1, 0, 1)), {{"a", {1}}, {"a", {2}}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("\"a\" measured twice"), std::string::npos);
}

TEST(GoldenAccept, BuildsGoldenFromSamplesWithPolicies) {
  std::map<std::string, FigurePolicy> policies = {
      {"ttft_ms", {Direction::lower_is_better, 0.25, 2.0, true}},
      {"ttft_ms_p99", {Direction::lower_is_better, 0.5, 5.0, false}},
      {"tokens_per_s", {Direction::higher_is_better, 0.1, 1.0, true}},
  };
  auto g = golden_from_measured("m1", {{"ttft_ms_p95", {40, 42, 41, 45, 39}},
                                       {"ttft_ms_p99", {50, 60}},
                                       {"tokens_per_s_median", {800, 810}}},
                                policies);
  ASSERT_TRUE(g.ok()) << g.error().message;
  const GoldenFigure& p95 = g->figures.at("ttft_ms_p95");
  EXPECT_DOUBLE_EQ(p95.median, 41);
  EXPECT_DOUBLE_EQ(p95.spread, 1);  // |deviations| 1,1,0,4,2 -> median 1
  EXPECT_EQ(p95.n, 5u);
  EXPECT_EQ(p95.tolerance_rel, 0.25);
  EXPECT_TRUE(p95.gate);
  EXPECT_EQ(g->figures.at("ttft_ms_p99").tolerance_rel, 0.5);  // longest key wins
  EXPECT_EQ(g->figures.at("tokens_per_s_median").direction, Direction::higher_is_better);

  // An accept over an existing golden keeps its hand-tuned thresholds, refreshes the numbers.
  Golden prev = *g;
  prev.figures.at("ttft_ms_p95").tolerance_rel = 0.05;
  auto again = golden_from_measured("m1", {{"ttft_ms_p95", {30, 30, 30}}}, policies, &prev);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->figures.at("ttft_ms_p95").tolerance_rel, 0.05);
  EXPECT_EQ(again->figures.at("ttft_ms_p95").median, 30);
}

TEST(GoldenAccept, NoSilentDefaults) {
  std::map<std::string, FigurePolicy> policies = {{"ttft_ms", {}}};
  auto unknown = golden_from_measured("m1", {{"ttftx_ms", {1}}}, policies);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("\"ttftx_ms\": no tolerance policy matches (known kinds: ttft_ms)"),
            std::string::npos)
      << unknown.error().message;
  EXPECT_FALSE(golden_from_measured("m1", {{"ttft_ms_p95", {}}}, policies).ok());
  EXPECT_FALSE(golden_from_measured("m1", {{"ttft_ms_p95", {INFINITY}}}, policies).ok());
  EXPECT_FALSE(golden_from_measured("", {{"ttft_ms_p95", {1}}}, policies).ok());  // no fingerprint
}

}  // namespace
}  // namespace fp
