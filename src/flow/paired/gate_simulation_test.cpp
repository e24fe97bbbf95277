#include "flow/paired/gate_simulation.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "testing/fixtures.h"

namespace fp {
namespace {

// Every scenario of docs/gate-design.md "Error rates" through the gate's one loop, 2000 trials per
// row (bench/gate_simulation prints the whole table): what the design promises, checked where the
// promise is exact and where it is only simulated.
class GateScenarios : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { scenarios_ = new std::vector<SimScenario>(gate_scenarios(testing::fixture(""))); }
  static void TearDownTestSuite() { delete scenarios_; }
  static const SimScenario& scenario(const std::string& name) {
    for (const auto& s : *scenarios_)
      if (s.name == name) return s;
    throw std::runtime_error("no scenario " + name);
  }
  static SimRates rates(const std::string& name, double share_of_effect, std::uint64_t seed, int trials = 2000) {
    const SimScenario& s = scenario(name);
    const SimRates r = simulate_gate(s.gated, s.draw(share_of_effect * s.min_effect()), trials, seed, s.budget_blocks);
    std::printf("  %-28s %.1f x the minimum effect: %s\n", name.c_str(), share_of_effect, rates_text(r).c_str());
    return r;
  }
  static std::vector<SimScenario>* scenarios_;
};
std::vector<SimScenario>* GateScenarios::scenarios_ = nullptr;

TEST_F(GateScenarios, EveryScenarioIsThere) {
  std::set<std::string> names;
  for (const auto& s : *scenarios_) names.insert(s.name);
  EXPECT_EQ(names.size(), 10u) << "the recorded launches of cpu-generic-openai-resampled must be readable";
}

// Identical builds: "regression" in at most 0.5% of trials on every scenario (the bound; the
// design's own bound at the regression bound is kAlphaRegression).
TEST_F(GateScenarios, IdenticalBuildsAreAlmostNeverARegression) {
  std::uint64_t seed = 100;
  for (const auto& s : *scenarios_) EXPECT_LE(rates(s.name, 0.0, seed++).regression, 0.005) << s.name;
}

// A true change at the regression bound (60% of the minimum effect) is called a regression at most
// kAlphaRegression of the time, and one at the minimum effect "no regression" at most
// kAlphaNoRegression (Bonferroni over the looks: exact for normal block values; 2000 trials carry
// +-0.4% and +-0.7% of them, so the checks allow that).
TEST_F(GateScenarios, TheWrongCallsStayWithinTheirLevels) {
  std::uint64_t seed = 200;
  for (const auto& s : *scenarios_) {
    EXPECT_LE(rates(s.name, kRegressionShare, seed++).regression, kAlphaRegression + 0.004) << s.name;
    EXPECT_LE(rates(s.name, 1.0, seed++).no_regression, kAlphaNoRegression + 0.007) << s.name;
  }
}

// 1.5 times the minimum effect is a regression within the budget in at least 95% of trials where the
// spread allows it; where it does not (bursts heavier than the budget can average out, or a spread
// far above the effect), the rate is printed and held at what the design gives today, so that a
// change that loses power shows (docs/gate-design.md "Error rates" says why each falls short).
TEST_F(GateScenarios, OneAndAHalfTimesTheMinimumEffectIsCaught) {
  const std::map<std::string, double> short_of_95 = {
      {"cpu-chat-tiny-floor", 0.90}, {"cpu-batch-tiny", 0.85}, {"h200-host-bursts-strict", 0.15}, {"noisy", 0.0}};
  std::uint64_t seed = 300;
  for (const auto& s : *scenarios_) {
    auto it = short_of_95.find(s.name);
    EXPECT_GE(rates(s.name, 1.5, seed++).regression, it == short_of_95.end() ? 0.95 : it->second) << s.name;
  }
}

// Identical builds decide "no regression" within the budget where the spread allows: the scenarios
// the earlier procedure was tuned on.
TEST_F(GateScenarios, IdenticalBuildsDecideWithinTheBudget) {
  std::uint64_t seed = 400;
  for (const char* name : {"cpu-prefill", "cpu-completion-bursts", "gpu-kernel-quiet", "cpu-chat-tiny-floor", "h200-host-bursts",
                           "gpu-default", "cpu-generic-openai-resampled"})
    EXPECT_GE(rates(name, 0.0, seed++).no_regression, 0.95) << name;
  EXPECT_GE(rates("cpu-batch-tiny", 0.0, seed++).no_regression, 0.90);  // spells of 12% spread in one trial of five
}

}  // namespace
}  // namespace fp
