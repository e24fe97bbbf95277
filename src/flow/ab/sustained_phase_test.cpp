#include "flow/ab/sustained_phase.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

SustainedRequest req(double start, double ttft_s, double e2e_s, int tokens, double prompt_ms) {
  SustainedRequest r;
  r.prompt_id = "p";
  r.start_s = start;
  r.result.ttft_s = ttft_s;
  r.result.e2e_s = e2e_s;
  r.result.completion_tokens = tokens;
  r.result.server.prompt_ms = prompt_ms;  // as the client reads it (client/stream_client.h ServerTimings)
  r.result.done = true;
  return r;
}

TEST(SustainedFigures, QueueIsClientTtftMinusServerPromptTime) {
  SustainedPass p;
  p.wall_s = 2.0;
  p.requests = {req(0.0, 0.050, 0.250, 11, 40), req(0.1, 0.300, 0.500, 11, 40)};
  SustainedFigures f = sustained_figures(p, 2);
  ASSERT_EQ(f.queue_ms.size(), 2u);
  EXPECT_NEAR(f.queue_ms[0], 10.0, 1e-9);
  EXPECT_NEAR(f.queue_ms[1], 260.0, 1e-9);
  EXPECT_NEAR(f.throughput_tokens_per_s, 11.0, 1e-9);
  ASSERT_EQ(f.tpot_ms.size(), 2u);
  EXPECT_NEAR(f.tpot_ms[0], 20.0, 1e-9);
  EXPECT_TRUE(f.drift.empty());  // fewer than 16 requests
}

TEST(SustainedFigures, DriftComparesTheLastQuarterWithTheFirst) {
  SustainedPass p;
  p.wall_s = 16;
  // Decode gets 50% slower over the phase (thermal throttling, say); TTFT stays put.
  for (int i = 0; i < 16; ++i) {
    double tpot = i < 8 ? 0.010 + 0.0001 * (i % 3) : 0.015 + 0.0001 * (i % 3);
    p.requests.push_back(req(i, 0.05 + 0.001 * (i % 4), 0.05 + 10 * tpot, 11, 49));
  }
  SustainedFigures f = sustained_figures(p, 1);
  ASSERT_EQ(f.drift.size(), 2u);
  EXPECT_EQ(f.drift[0].figure, "ttft_ms");
  EXPECT_EQ(f.drift[0].window, 4u);
  EXPECT_EQ(f.drift[0].first_vs_last.verdict, AbVerdict::within_noise);
  EXPECT_EQ(f.drift[1].figure, "tpot_ms");
  EXPECT_NEAR(f.drift[1].first_vs_last.diff_rel, 0.5, 0.05);
}

}  // namespace
}  // namespace fp
