#include "flow/passes/figures.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

// A request of `level` in `round`: TTFT and end-to-end in ms, `tokens` output tokens, sent at `sent_s`.
TimedRequest request(int level, int round, double ttft_ms, double e2e_ms, int tokens = 9, double sent_s = 0) {
  TimedRequest tr;
  tr.prompt_id = "p";
  tr.level = level;
  tr.round = round;
  tr.sent_s = sent_s;
  tr.result.ttft_s = ttft_ms / 1e3;
  tr.result.e2e_s = e2e_ms / 1e3;
  tr.result.completion_tokens = tokens;
  tr.result.prompt_tokens = 32;
  tr.result.content_event_times_s = {ttft_ms / 1e3, e2e_ms / 1e3};
  tr.result.done = true;
  return tr;
}

const FigureResult* find(const std::vector<FigureResult>& figs, const std::string& name) {
  for (const auto& f : figs)
    if (f.name == name) return &f;
  return nullptr;
}

Case levelled_case() {
  Case c;
  c.job = Job::Chat;
  c.plan.concurrency = {1, 2};
  Targets t;
  t.max_ms = {{"ttft_ms", 100}, {"tpot_ms", 10}};
  c.targets = t;
  return c;
}

// Level 1: rounds 0 and 1, fast; level 2: rounds 2 and 3, one slow request each.
TimedPass levelled_pass() {
  TimedPass p;
  p.round_wall_s = {1.0, 1.0, 2.0, 4.0};
  for (int r : {0, 1})
    for (int i = 0; i < 2; ++i) p.requests.push_back(request(1, r, 50, 130));  // TPOT (130-50)/8 = 10: meets
  for (int r : {2, 3}) {
    p.requests.push_back(request(2, r, 60, 136));  // TPOT 9.5: meets
    p.requests.push_back(request(2, r, 150, 226));  // TTFT over its target
  }
  return p;
}

TEST(CaseFigures, EachLevelOnItsOwnKeyedByLevel) {
  const auto figs = case_figures(levelled_case(), levelled_pass());
  EXPECT_EQ(find(figs, "ttft_ms"), nullptr);  // no unlevelled figures in a case with levels
  const FigureResult* c1 = find(figs, "c1.ttft_ms");
  const FigureResult* c2 = find(figs, "c2.ttft_ms");
  ASSERT_TRUE(c1 && c2);
  EXPECT_EQ(c1->summary.n, 4u);
  EXPECT_DOUBLE_EQ(c1->summary.median, 50);
  EXPECT_EQ(c2->summary.n, 4u);
  EXPECT_DOUBLE_EQ(c2->summary.max, 150);
  // The chat job gates on ttft_ms_p95 at every level; per round within the level.
  ASSERT_TRUE(find(figs, "c2.ttft_ms_p95"));
  EXPECT_TRUE(find(figs, "c1.ttft_ms_p95")->gate);
  EXPECT_TRUE(find(figs, "c2.ttft_ms_p95")->gate);
  EXPECT_EQ(find(figs, "c2.ttft_ms_p95")->summary.n, 2u);
  // Rounds have walls: requests and output tokens per second per round.
  EXPECT_EQ(find(figs, "c1.requests_per_s")->samples, (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(find(figs, "c2.requests_per_s")->samples, (std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(find(figs, "c2.throughput_tokens_per_s")->samples, (std::vector<double>{9.0, 4.5}));
  EXPECT_FALSE(find(figs, "c2.throughput_tokens_per_s")->gate);
}

TEST(CaseFigures, GoodputPerLevelAndRound) {
  const auto figs = case_figures(levelled_case(), levelled_pass());
  const FigureResult* share1 = find(figs, "c1.goodput_share");
  const FigureResult* share2 = find(figs, "c2.goodput_share");
  const FigureResult* rate2 = find(figs, "c2.goodput_requests_per_s");
  ASSERT_TRUE(share1 && share2 && rate2);
  EXPECT_EQ(share1->samples, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(share2->samples, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(rate2->samples, (std::vector<double>{0.5, 0.25}));  // 1 good request in 2 s, then in 4 s
  EXPECT_FALSE(share2->lower_is_better);
  EXPECT_FALSE(share2->gate);  // reported, not gated, unless the targets say so
  Case gated = levelled_case();
  gated.targets->gate = true;
  EXPECT_TRUE(find(case_figures(gated, levelled_pass()), "c2.goodput_share")->gate);
  EXPECT_FALSE(find(case_figures(gated, levelled_pass()), "c2.goodput_requests_per_s")->gate);
}

TEST(CaseFigures, WithoutLevelsTheJobsOwnFiguresUnchanged) {
  Case c;
  c.job = Job::Chat;
  TimedPass p;
  for (int r : {0, 1}) {
    p.requests.push_back(request(0, r, 50, 130, 9, r * 1.0));
    p.requests.push_back(request(0, r, 70, 150, 9, r * 1.0 + 0.2));
  }
  const auto plain = compute_figures(Job::Chat, p);
  const auto figs = case_figures(c, p);
  ASSERT_EQ(figs.size(), plain.size());
  for (size_t i = 0; i < figs.size(); ++i) {
    EXPECT_EQ(figs[i].name, plain[i].name);
    EXPECT_EQ(figs[i].samples, plain[i].samples);
  }
  // Targets without levels: goodput per sequential round, its duration from first send to last done.
  Targets t;
  t.max_ms = {{"ttft_ms", 60}};
  c.targets = t;
  const auto with_targets = case_figures(c, p);
  EXPECT_EQ(find(with_targets, "goodput_share")->samples, (std::vector<double>{0.5, 0.5}));
  const auto rate = find(with_targets, "goodput_requests_per_s")->samples;
  ASSERT_EQ(rate.size(), 2u);
  EXPECT_NEAR(rate[0], 1 / 0.35, 1e-9);  // sent at 0 and 0.2 s, the last done at 0.35 s
}

TEST(CaseFigures, RequestLatencyCountsOneTokenTpotAsZero) {
  EXPECT_EQ(request_latency(request(1, 0, 10, 20, 1).result).tpot_ms, 0);
  EXPECT_DOUBLE_EQ(request_latency(request(1, 0, 10, 20, 3).result).tpot_ms, 5);
  EXPECT_TRUE(std::isnan(request_latency(request(1, 0, 10, 20, -1).result).tpot_ms));  // no usage
}

TEST(LevelPass, RenumbersRoundsAndKeepsTheirWalls) {
  const TimedPass two = level_pass(levelled_pass(), 2);
  ASSERT_EQ(two.requests.size(), 4u);
  EXPECT_EQ(two.requests[0].round, 0);
  EXPECT_EQ(two.requests[3].round, 1);
  EXPECT_EQ(two.round_wall_s, (std::vector<double>{2.0, 4.0}));
  EXPECT_TRUE(level_pass(levelled_pass(), 8).requests.empty());
}

}  // namespace
}  // namespace fp
