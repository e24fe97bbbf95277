#include "flow/passes/launches.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

// One request with this time to first token (ms) in `round`.
TimedRequest request(const std::string& prompt, int round, double ttft_ms) {
  TimedRequest tr;
  tr.prompt_id = prompt;
  tr.round = round;
  tr.result.ttft_s = ttft_ms / 1e3;
  tr.result.e2e_s = 2 * ttft_ms / 1e3;
  tr.result.done = true;
  tr.result.text = "answer " + prompt;
  return tr;
}

// A launch of two rounds over two prompts, its TTFTs around `base` ms.
TimedPass launch(double base, const std::string& log) {
  TimedPass p;
  p.log_path = log;
  p.argv = {"llama-server", log};
  p.ready_s = base / 1e3;
  p.cold_first_prompt = "a";
  p.cold_first.ttft_s = 10 * base / 1e3;
  for (int round = 0; round < 2; ++round) {
    p.requests.push_back(request("a", round, base));
    p.requests.push_back(request("b", round, base + 2));
  }
  return p;
}

const FigureResult& figure(const std::vector<FigureResult>& figs, const std::string& name) {
  for (const auto& f : figs)
    if (f.name == name) return f;
  ADD_FAILURE() << "no figure " << name;
  static FigureResult none;
  return none;
}

TEST(Launches, FirstLaunchKeepsTheRunFolderOthersGetTheirOwn) {
  EXPECT_EQ(launch_dir("/r/run", 1), "/r/run");
  EXPECT_EQ(launch_dir("/r/run", 2), "/r/run/launch-2");
  EXPECT_EQ(launch_dir("/r/run", 5), "/r/run/launch-5");
}

TEST(Launches, PooledPassNumbersRoundsOnAndKeepsTheFirstLaunchsColdStart) {
  TimedPass a = launch(10, "a.log"), b = launch(20, "b.log");
  a.peak_rss_bytes = 100;
  b.peak_rss_bytes = 300;
  b.errors = {"request b round 2: timeout"};
  TimedPass p = pooled_pass({a, b});
  ASSERT_EQ(p.requests.size(), 8u);
  EXPECT_EQ(p.requests[3].round, 1);
  EXPECT_EQ(p.requests[4].round, 2);  // launch 2's round 0
  EXPECT_EQ(p.requests[7].round, 3);
  EXPECT_EQ(p.log_path, "a.log");
  EXPECT_DOUBLE_EQ(p.ready_s, 0.010);
  EXPECT_DOUBLE_EQ(p.cold_first.ttft_s, 0.1);
  EXPECT_EQ(*p.peak_rss_bytes, 300u);
  ASSERT_EQ(p.errors.size(), 1u);
}

TEST(Launches, BatchRoundWallsFollowTheirRounds) {
  TimedPass a = launch(10, "a.log"), b = launch(20, "b.log");
  a.round_wall_s = {1.0, 2.0};
  b.round_wall_s = {3.0, 4.0};
  TimedPass p = pooled_pass({a, b});
  EXPECT_EQ(p.round_wall_s, (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
}

TEST(Launches, FiguresPoolSamplesAndKeepEachLaunchMedian) {
  auto figs = launch_figures(Job::Chat, {launch(10, "1"), launch(20, "2"), launch(12, "3")});
  const FigureResult& ttft = figure(figs, "ttft_ms");
  EXPECT_EQ(ttft.samples.size(), 12u);  // 4 requests per launch, pooled
  // Each launch's median TTFT: (base + base + 2) / 2 over its requests.
  EXPECT_EQ(ttft.launch_medians, (std::vector<double>{11, 21, 13}));
  const FigureResult& p95 = figure(figs, "ttft_ms_p95");
  EXPECT_EQ(p95.samples.size(), 6u);  // one per round, 2 rounds per launch
  EXPECT_EQ(p95.launch_medians.size(), 3u);
  EXPECT_TRUE(p95.gate);
}

TEST(Launches, OneLaunchIsOneMedian) {
  auto figs = launch_figures(Job::Chat, {launch(10, "1")});
  EXPECT_EQ(figure(figs, "ttft_ms").launch_medians, (std::vector<double>{11}));
}

}  // namespace
}  // namespace fp
