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
  decide_ab(Job::Chat, decide_figures({{"ttft_ms", true, 0.05, u}}), r);
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

}  // namespace
}  // namespace fp
