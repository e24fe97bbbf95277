#include "report/ab_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "flow/ab/ab_decision.h"
#include "flow/ab/ab_runner.h"

namespace fp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

FigureResult fig(const std::string& name, std::vector<double> samples, bool gate) {
  FigureResult f;
  f.name = name;
  f.samples = samples;
  f.summary = summarize(samples);
  f.gate = gate;
  return f;
}

AbRun sample_run() {
  AbRun r;
  r.case_name = "chat-tiny-short";
  r.job = "chat";
  r.started_utc = "2026-11-29T00:00:00Z";
  r.output_dir = "/tmp/results/x/chat-tiny-short/ab-20261129T000000Z-1";
  r.repetitions = 5;
  r.order = {"off", "on", "on", "off"};
  r.blocks = 2;
  r.off.name = "off";
  r.off.flag_value = "off";
  r.off.verdict = Activity::NotActive;
  r.off.verdict_as_required = true;
  r.on.name = "on";
  r.on.flag_value = "on";
  r.on.verdict = Activity::Active;
  r.on.verdict_as_required = true;
  r.off.figures = {fig("ttft_ms_p95", {10, 11, 12, 10, 11}, true), fig("tpot_ms", {3, 3.1, 2.9, 3, 3}, false)};
  r.on.figures = {fig("ttft_ms_p95", {5, 6, 5, 6, 5}, true), fig("tpot_ms", {3, 3.1, 2.9, 3, 3.05}, false)};
  r.off.answers = {{"greeting", "hello there"}};
  r.on.answers = {{"greeting", "hello where"}};
  r.off.timed_argv = {"llama-server", "--port", "{port}", "-fa", "off"};
  r.on.timed_argv = {"llama-server", "--port", "{port}", "-fa", "on"};
  r.figures = compare_arms(r.off, r.on);
  r.figures[0].headline = true;
  r.answers = compare_arm_answers(r.off, r.on);
  std::vector<PairedUnit> u;
  for (int k = 0; k < 4; ++k) u.push_back({k, k % 2 == 0, "greeting", 10.0 + k % 2, 5.0 + k % 2});
  decide_ab(Job::Chat, decide_figures({{"ttft_ms", true, 0.05, u}}, LookSchedule(4, 4)), r);
  return r;
}

TEST(AbReport, HeadlinesFirstThenDetails) {
  std::string t = ab_to_text(sample_run());
  auto at = [&](const std::string& s) { return t.find(s); };
  EXPECT_LT(at("## Decision"), at("## Headlines"));
  EXPECT_LT(at("## Headlines"), at("## Same system?"));
  EXPECT_LT(at("## Same system?"), at("## Mechanism stated"));
  EXPECT_LT(at("## Mechanism stated"), at("## Every figure compared"));
  // The gate is a headline; tpot_ms (not gated, not stated, within noise) only in the details.
  size_t head = at("## Headlines"), details = at("## Every figure compared");
  EXPECT_LT(t.find("ttft_ms_p95", head), details);
  EXPECT_GT(t.find("tpot_ms", head), details);
  EXPECT_THAT(t, HasSubstr("arm on  (on):   active, as required"));
  EXPECT_THAT(t, HasSubstr("1 of 1 prompts answer differently"));
  EXPECT_THAT(t, HasSubstr("+++ flag-on/greeting"));
  EXPECT_THAT(t, HasSubstr("arm off timed:    llama-server --port {port} -fa off"));
}

TEST(AbReport, TextIsStableAndCarriesNoTimestamp) {
  AbRun a = sample_run(), b = sample_run();
  b.started_utc = "2026-11-30T12:00:00Z";
  b.output_dir = "/elsewhere";
  EXPECT_EQ(ab_to_text(a), ab_to_text(b));
  EXPECT_THAT(ab_to_text(a), Not(HasSubstr("2026-11-29")));
}

TEST(AbReport, SaysHowTheLaunchesMet) {
  AbRun r = sample_run();
  r.launches = {"launches interleaved from block 2: both up at once, their requests in turn"};
  const std::string t = ab_to_text(r);
  EXPECT_NE(t.find("blocks: 2\nlaunches interleaved from block 2: both up at once, their requests in turn\n\n"), std::string::npos) << t;
  EXPECT_EQ(ab_to_json(r)["plan"]["launches"].size(), 1u);
}

TEST(AbReport, JsonHasBothArmsTheDifferencesAndTheDecision) {
  auto j = ab_to_json(sample_run());
  EXPECT_EQ(j["decision"]["exit_code"], 0);
  EXPECT_EQ(j["arms"]["on"]["evidence"]["verdict"], "active");
  EXPECT_EQ(j["arms"]["off"]["launch"]["timed_argv"][4], "off");
  ASSERT_EQ(j["figures"].size(), 2u);
  EXPECT_EQ(j["figures"][0]["figure"], "ttft_ms_p95");
  EXPECT_EQ(j["figures"][0]["verdict"], "different");
  EXPECT_EQ(j["figures"][0]["n_off"], 5);
  EXPECT_FALSE(j["answers"]["prompts"][0]["identical"].get<bool>());
}

// A difference classified (flow/ab/answer_classification.h): where it starts by token, what it is,
// in ab.txt and ab.json, and how it weighs in the same-system statement and the decision.
TEST(AbReport, ADifferingAnswerShowsItsFirstTokenAndItsClassification) {
  AbRun r = sample_run();
  AnswerDifference& d = r.answers[0].difference;
  d.kind = AnswerDifferenceKind::expected_near_tie;
  d.first_token = 3;
  d.off_token = " there";
  d.on_token = " where";
  d.margin_nats = 0.00076;
  d.margin_arm = "off";
  d.agreeing_tokens = 2;
  d.disagreement_nats = 0.0031;
  d.factor = 4;
  d.bound_nats = 0.0124;
  r.off.answers_pass = "1 prompts (greeting), log off/answers-pass.log";
  decide_ab(Job::Chat, {}, r);
  std::string t = ab_to_text(r);
  EXPECT_THAT(t, HasSubstr("1 of 1 prompts answer differently with the flag on, each a near-tie"));
  EXPECT_THAT(t, HasSubstr("    first differing token: token 3 (flag off chose \" there\", flag on \" where\")\n"));
  EXPECT_THAT(t, HasSubstr("    expected: a near-tie at token 3 (margin 0.00076 nats), the flag changes the summation order "
                           "(bound 0.0124 nats: 4 x 0.0031, the largest change in log-probability of the same token between "
                           "the arms over the 2 tokens both chose alike)"));
  EXPECT_THAT(t, HasSubstr("  answers pass, flag off: 1 prompts (greeting)"));
  auto j = ab_to_json(r)["answers"]["prompts"][0]["difference"];
  EXPECT_EQ(j["kind"], "expected");
  EXPECT_EQ(j["first_token"], 3);
  EXPECT_EQ(j["margin_nats"], 0.00076);
  EXPECT_EQ(j["bound_nats"], 0.0124);
  EXPECT_TRUE(r.findings.empty());

  // Beyond the bound: it weighs in, as a finding the decision quotes.
  d.kind = AnswerDifferenceKind::not_expected;
  d.margin_nats = 0.9;
  decide_ab(Job::Chat, {}, r);
  EXPECT_THAT(r.same_system, HasSubstr("1 not expected (a margin beyond the arms' measured numerical disagreement)"));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_THAT(r.findings[0], HasSubstr("answers differ, prompt greeting: not expected: at token 3"));

  // Without probabilities: said, never guessed; ab.json's numbers are null.
  d = AnswerDifference{};
  d.why = UnclassifiedWhy::no_probabilities;
  d.detail = "on";
  decide_ab(Job::Chat, {}, r);
  t = ab_to_text(r);
  EXPECT_THAT(t, HasSubstr("    unclassified: the runtime returned no token probabilities (flag on)\n"));
  EXPECT_THAT(t, HasSubstr("first differing token: not known (unclassified: the runtime returned no token probabilities"));
  j = ab_to_json(r)["answers"]["prompts"][0]["difference"];
  EXPECT_EQ(j["kind"], "unclassified");
  EXPECT_TRUE(j["margin_nats"].is_null());
  EXPECT_TRUE(j["first_token"].is_null());
}

}  // namespace
}  // namespace fp
