#include "flow/ab/ab_runner.h"
#include "testing/ab_arms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>


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

using testing::arm;

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

TEST(AbRunner, ComparesEveryFigureInBothArmsOnMinusOff) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5});
  ASSERT_EQ(r.figures.size(), 2u);
  EXPECT_EQ(r.figures[0].name, "ttft_ms_p95");
  EXPECT_TRUE(r.figures[0].gate);
  EXPECT_LT(r.figures[0].cmp.diff, 0);
  EXPECT_EQ(r.figures[0].effect, AbEffect::better_with_flag_on);
}

TEST(AbRunner, ComparesAnswersPromptByPromptOffToOn) {
  AbRun r = run_with({10, 11, 12, 10, 11}, {5, 6, 5, 6, 5}, "extraction");
  r.on.answers["b"] = "two";
  r.answers = compare_arm_answers(r.off, r.on);
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_TRUE(r.answers[0].identical);
  EXPECT_FALSE(r.answers[1].identical);
  EXPECT_THAT(r.answers[1].diff, HasSubstr("--- flag-off/b"));
  EXPECT_THAT(r.answers[1].diff, HasSubstr("+++ flag-on/b"));
}

}  // namespace
}  // namespace fp
