#include "flow/ab_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "flow/mechanism.h"

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

FigureResult fig(const std::string& name, std::vector<double> samples, bool gate, bool lower = true) {
  FigureResult f;
  f.name = name;
  f.samples = samples;
  f.summary = summarize(samples);
  f.gate = gate;
  f.lower_is_better = lower;
  return f;
}

AbArm arm(const std::string& name, bool as_required = true) {
  AbArm a;
  a.name = name;
  a.flag_value = name;
  a.verdict = name == "on" ? "active" : "not active";
  a.verdict_as_required = as_required;
  return a;
}

AbRun run_with(const std::vector<double>& off_ttft, const std::vector<double>& on_ttft, const std::string& job = "chat") {
  AbRun r;
  r.job = job;
  r.off = arm("off");
  r.on = arm("on");
  r.off.figures = {fig("ttft_ms_p95", off_ttft, job == "chat"), fig("e2e_ms", off_ttft, false)};
  r.on.figures = {fig("ttft_ms_p95", on_ttft, job == "chat"), fig("e2e_ms", on_ttft, false)};
  r.off.answers = {{"a", "same"}, {"b", "one"}};
  r.on.answers = {{"a", "same"}, {"b", "one"}};
  r.figures = compare_arms(r.off, r.on);
  r.answers = compare_arm_answers(r.off, r.on);
  return r;
}

TEST(AbRunner, ArmsAlternateOnOff) {
  EXPECT_THAT(arm_order(3), ElementsAre("on", "off", "on", "off", "on", "off"));
}

TEST(AbRunner, ComparesEveryFigureInBothArmsOnMinusOff) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5});
  ASSERT_EQ(r.figures.size(), 2u);
  EXPECT_EQ(r.figures[0].name, "ttft_ms_p95");
  EXPECT_TRUE(r.figures[0].gate);
  EXPECT_LT(r.figures[0].cmp.diff, 0);
  EXPECT_EQ(r.figures[0].effect, "better with the flag on");
}

TEST(AbRunner, ChatPassesWhenTheGateIsBetterOrWithinNoise) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5});
  decide_ab(Job::Chat, r);
  EXPECT_EQ(r.exit_code, 0) << r.decision;
  EXPECT_THAT(r.same_system, HasSubstr("identical answers for all 2 prompts"));
  ASSERT_EQ(r.gates.size(), 1u);
  EXPECT_EQ(r.gates[0].outcome, "pass");
}

TEST(AbRunner, ChatFailsWhenTheGateIsWorseWithTheFlagOn) {
  AbRun r = run_with({5, 6, 5, 6, 5}, {10, 11, 12, 10, 11});
  decide_ab(Job::Chat, r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.decision, HasSubstr("gate ttft_ms_p95 is worse with the flag on"));
}

TEST(AbRunner, AProbedCheckThatDiffersFailsEvenWhenFaster) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5});
  r.on.probed_mismatches = {"fused attention kernels differ: only in the evidence pass: flash_attn_ext_vec<128>"};
  decide_ab(Job::Chat, r);
  EXPECT_EQ(r.exit_code, 1) << r.decision;
  EXPECT_THAT(r.decision, HasSubstr("arm on: the timed configuration, probed, differs from its evidence pass: fused attention "
                                    "kernels differ: only in the evidence pass: flash_attn_ext_vec<128>"));
}

TEST(AbRunner, TooFewSamplesToDecideIsIncomplete) {
  AbRun r = run_with({10, 11, 12}, {5, 6, 5});
  decide_ab(Job::Chat, r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.gates[0].outcome, "undecided");
  EXPECT_THAT(r.gates[0].detail, HasSubstr("fewer than 4 per arm"));
}

TEST(AbRunner, DifferentAnswersAreADifferentSystemAndFailExtraction) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5}, "extraction");
  r.on.answers["b"] = "two";
  r.answers = compare_arm_answers(r.off, r.on);
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_FALSE(r.answers[1].identical);
  EXPECT_THAT(r.answers[1].diff, HasSubstr("--- flag-off/b"));
  EXPECT_THAT(r.answers[1].diff, HasSubstr("+++ flag-on/b"));
  decide_ab(Job::Extraction, r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.same_system, HasSubstr("1 of 2 prompts answer differently"));
  EXPECT_THAT(r.same_system, HasSubstr("the faster arm (flag on, by e2e_ms) is a different system"));

  // The same difference in a chat job is said, not gated.
  AbRun c = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5});
  c.on.answers["b"] = "two";
  c.answers = compare_arm_answers(c.off, c.on);
  decide_ab(Job::Chat, c);
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_THAT(c.same_system, HasSubstr("different system"));
}

TEST(AbRunner, EvidenceThatTheArmsDidNotDifferFails) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5});
  r.on = arm("on", /*as_required=*/false);
  r.on.verdict = "not active";
  r.on.figures = r.off.figures;
  decide_ab(Job::Chat, r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.decision, HasSubstr("arm on (on): fused attention must be active, the evidence says not active"));
}

TEST(AbRunner, AFailedLaunchIsIncomplete) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5});
  r.off.errors.push_back("launch 2: the runtime exited");
  decide_ab(Job::Chat, r);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.decision, HasSubstr("INCOMPLETE: arm off: launch 2"));
}

}  // namespace
}  // namespace fp
