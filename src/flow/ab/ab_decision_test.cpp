#include "flow/ab/ab_decision.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "flow/ab/ab_runner.h"
#include "testing/ab_arms.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

using testing::arm;

// The paired decision of ttft_ms after `blocks` blocks where the flag on is `ratio` x off, with a
// little block-to-block noise.
std::vector<FigureDecision> ttft(double ratio, int blocks = 6) {
  std::vector<PairedUnit> u;
  for (int k = 0; k < blocks; ++k)
    u.push_back({k, k % 2 == 0, "p", 100.0, 100.0 * ratio * std::exp(0.002 * ((k * 5) % 3 - 1))});
  return decide_figures({{"ttft_ms", true, 0.05, u}}, LookSchedule(4, 40));
}

AbRun run_with_answers(const std::string& job = "chat") {
  AbRun r;
  r.job = job;
  r.off = arm("off");
  r.on = arm("on");
  r.off.answers = {{"a", "same"}, {"b", "one"}};
  r.on.answers = {{"a", "same"}, {"b", "one"}};
  r.answers = compare_arm_answers(r.off, r.on);
  return r;
}

TEST(AbDecision, PassesWhenTheFlagOnIsFaster) {
  AbRun r = run_with_answers();
  decide_ab(Job::Chat, ttft(0.5), r);
  EXPECT_EQ(r.exit_code, 0) << r.decision;
  ASSERT_EQ(r.gates.size(), 1u);
  EXPECT_EQ(r.gates[0].outcome, AbGateOutcome::pass);
  EXPECT_THAT(r.same_system, HasSubstr("identical answers for all 2 prompts"));
}

TEST(AbDecision, FailsWhenTheFlagOnIsWorse) {
  AbRun r = run_with_answers();
  decide_ab(Job::Chat, ttft(1.3), r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.decision, HasSubstr("gate ttft_ms is worse with the flag on"));
  EXPECT_THAT(r.decision, HasSubstr("regression: flag on worse by +30.0%"));
}

TEST(AbDecision, UnresolvedWithinTheBudgetIsExit3) {
  AbRun r = run_with_answers();
  std::vector<PairedUnit> u;
  const double noise[] = {0.06, -0.05, 0.09, -0.03};
  for (int k = 0; k < 4; ++k) u.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(0.03 + noise[k])});
  decide_ab(Job::Chat, decide_figures({{"ttft_ms", true, 0.05, u}}, LookSchedule(4, 40)), r);
  EXPECT_EQ(r.exit_code, 3) << r.decision;
  EXPECT_EQ(r.gates[0].outcome, AbGateOutcome::undecided);
  EXPECT_THAT(r.gates[0].detail, HasSubstr("more blocks would likely settle it"));
}

TEST(AbDecision, AProbedCheckThatDiffersFailsEvenWhenFaster) {
  AbRun r = run_with_answers();
  r.on.probed_mismatches = {"fused attention kernels differ: only in the evidence pass: flash_attn_ext_vec<128>"};
  decide_ab(Job::Chat, ttft(0.5), r);
  EXPECT_EQ(r.exit_code, 1) << r.decision;
  EXPECT_THAT(r.decision, HasSubstr("arm on: the timed configuration, probed, differs from its evidence pass"));
}

TEST(AbDecision, DifferentAnswersFailExtractionAndNameTheFasterArm) {
  AbRun r = run_with_answers("extraction");
  r.on.answers["b"] = "two";
  r.answers = compare_arm_answers(r.off, r.on);
  decide_ab(Job::Extraction, ttft(0.5), r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.same_system, HasSubstr("1 of 2 prompts answer differently"));
  EXPECT_THAT(r.same_system, HasSubstr("the faster arm (flag on, by ttft_ms) is a different system"));

  // The same difference in a chat job is said, not gated.
  AbRun c = run_with_answers();
  c.on.answers["b"] = "two";
  c.answers = compare_arm_answers(c.off, c.on);
  decide_ab(Job::Chat, ttft(0.5), c);
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_THAT(c.same_system, HasSubstr("different system"));
}

// A difference classified as a near-tie within the arms' measured disagreement: said so in a chat job
// (no finding); the extraction job's answers gate still fails, its contract being the exact answer.
TEST(AbDecision, AnExpectedNearTieIsSaidAsSuchAndStillFailsExtraction) {
  for (const std::string job : {"chat", "extraction"}) {
    AbRun r = run_with_answers(job);
    r.on.answers["b"] = "two";
    r.answers = compare_arm_answers(r.off, r.on);
    r.answers[1].difference.kind = AnswerDifferenceKind::expected_near_tie;
    r.answers[1].difference.first_token = 2;
    decide_ab(job == "chat" ? Job::Chat : Job::Extraction, ttft(0.5), r);
    EXPECT_THAT(r.same_system, HasSubstr("1 of 2 prompts answer differently with the flag on, each a near-tie"));
    EXPECT_THAT(r.same_system, HasSubstr("the same system but for rounding"));
    EXPECT_TRUE(r.findings.empty());
    EXPECT_EQ(r.exit_code, job == "chat" ? 0 : 1) << r.decision;
  }
  // One expected, one not classified: the arms are different systems, as before.
  AbRun r = run_with_answers();
  r.on.answers = {{"a", "other"}, {"b", "two"}};
  r.answers = compare_arm_answers(r.off, r.on);
  r.answers[0].difference.kind = AnswerDifferenceKind::expected_near_tie;
  decide_ab(Job::Chat, ttft(0.5), r);
  EXPECT_THAT(r.same_system, HasSubstr("2 of 2 prompts answer differently with the flag on (1 unclassified, 1 expected near-ties): "
                                       "the faster arm (flag on, by ttft_ms) is a different system"));
}

TEST(AbDecision, EvidenceThatTheArmsDidNotDifferFails) {
  AbRun r = run_with_answers();
  r.on = arm("on", /*as_required=*/false);
  r.on.verdict = Activity::NotActive;
  decide_ab(Job::Chat, ttft(1.0), r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.decision, HasSubstr("arm on (on): fused attention must be active, the evidence says not active"));
}

TEST(AbDecision, AFailedLaunchIsIncomplete) {
  AbRun r = run_with_answers();
  r.off.errors.push_back("block 2: the runtime exited");
  decide_ab(Job::Chat, ttft(0.5), r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.decision, HasSubstr("INCOMPLETE: arm off: block 2"));
}

TEST(AbDecision, AGateFigureMeasuredInNeitherArmIsIncomplete) {
  AbRun r = run_with_answers();
  decide_ab(Job::Chat, decide_figures({{"ttft_ms", true, 0.05, {}}}, LookSchedule(4, 40)), r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.gates[0].outcome, AbGateOutcome::undecided);
}

TEST(AbDecision, AnOffArmThatStoppedAnsweringUnderLoadIsAFindingNotIncomplete) {
  AbRun r = run_with_answers();
  r.off.sustained_stop =
      "6 of 23 sustained requests sent no byte for 60 s (stalled): the server stopped answering 6.2 s into the 10 s phase";
  decide_ab(Job::Chat, ttft(0.5), r);
  EXPECT_EQ(r.exit_code, 0) << r.decision;
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0], "flag off: " + r.off.sustained_stop);
  EXPECT_THAT(r.decision, HasSubstr("PASS: "));
  EXPECT_THAT(r.decision, HasSubstr("flag off: 6 of 23 sustained requests sent no byte for 60 s"));
}

TEST(AbDecision, AnOnArmThatStoppedAnsweringUnderLoadFails) {
  AbRun r = run_with_answers();
  r.on.sustained_stop = "2 of 9 sustained requests sent no byte for 5 s (stalled)";
  decide_ab(Job::Chat, ttft(0.5), r);
  EXPECT_EQ(r.exit_code, 1) << r.decision;
  EXPECT_THAT(r.decision, HasSubstr("FAIL: flag on: 2 of 9 sustained requests sent no byte for 5 s"));
}

}  // namespace
}  // namespace fp
