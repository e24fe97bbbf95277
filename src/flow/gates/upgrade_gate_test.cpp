#include "flow/gates/upgrade_gate.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

RunResult::GoldenFigure figure(FigureStatus status, FigureStatus judged, double worse_by) {
  RunResult::GoldenFigure f;
  f.name = "ttft_ms_p95";
  f.status = status;
  f.judged = judged;
  f.gate = true;
  f.worse_by = worse_by;
  return f;
}

// Unresolved (--unresolved-exit) only where the threshold rule itself left a gated figure's
// worsening within the noise band: from the typed comparison, never its words.
TEST(UpgradeGate, UnresolvedIsAGatedFigureWorseWithinNoise) {
  EXPECT_TRUE(worse_within_noise(figure(FigureStatus::within_noise, FigureStatus::within_noise, 1.5)));
  EXPECT_FALSE(worse_within_noise(figure(FigureStatus::within_noise, FigureStatus::within_noise, -1.5)));  // better
  // A regression a BUSIER, SLOWER MACHINE or OTHER MACHINE note set aside is not unresolved.
  EXPECT_FALSE(worse_within_noise(figure(FigureStatus::within_noise, FigureStatus::regressed, 1.5)));
  EXPECT_FALSE(worse_within_noise(figure(FigureStatus::pass, FigureStatus::pass, 1.5)));
  auto guard = figure(FigureStatus::within_noise, FigureStatus::within_noise, 1.5);
  guard.gate = false;
  guard.guard = true;
  EXPECT_FALSE(worse_within_noise(guard));
  auto memory = figure(FigureStatus::within_noise, FigureStatus::within_noise, 1.5);
  memory.memory = true;
  EXPECT_FALSE(worse_within_noise(memory));
}

TEST(UpgradeGate, OutcomeWords) {
  EXPECT_STREQ(to_string(UpgradeOutcome::pass), "pass");
  EXPECT_STREQ(to_string(UpgradeOutcome::fail), "FAIL");
  EXPECT_STREQ(to_string(UpgradeOutcome::unresolved), "unresolved");
  EXPECT_STREQ(to_string(UpgradeOutcome::incomplete), "incomplete");
  EXPECT_STREQ(to_string(UpgradeOutcome::skipped), "skipped");
}

}  // namespace
}  // namespace fp
