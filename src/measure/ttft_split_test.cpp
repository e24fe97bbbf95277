#include "measure/ttft_split.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(TtftSplit, PartsAndCachedTokens) {
  // Two requests: one whole prompt evaluated, one with 30 of 40 tokens from the cache; the first
  // text came after 2 tokens (a held-back UTF-8 character) in the first, 1 in the second.
  std::vector<TtftPart> parts = {{20.0, 12.0, 3.0, 2, 40, 0}, {10.0, 4.0, 1.0, 1, 10, 30}, {9.0, kNaN, kNaN, kNaN, kNaN, kNaN}};
  TtftSplit s = split_ttft(parts);
  EXPECT_EQ(s.requests, 2u);
  EXPECT_EQ(s.with_first_text_timings, 2u);
  EXPECT_DOUBLE_EQ(s.ttft_ms, 15.0);
  EXPECT_DOUBLE_EQ(s.prefill_ms, 8.0);
  EXPECT_DOUBLE_EQ(s.decode_before_text_ms, 2.0);
  EXPECT_DOUBLE_EQ(s.outside_ms, 5.0);  // 20-12-3 = 5, 10-4-1 = 5
  EXPECT_EQ(s.cached_requests, 1u);
  EXPECT_DOUBLE_EQ(s.cached_tokens_total, 30.0);
  EXPECT_DOUBLE_EQ(s.prompt_tokens_total, 50.0);
  const std::string t = ttft_split_text(s);
  EXPECT_THAT(t, HasSubstr("the server's prefill 8.000 ms (prompt_ms; 25 prompt tokens evaluated)"));
  EXPECT_THAT(t, HasSubstr("outside the server's timings 5.000 ms"));
  EXPECT_THAT(t, HasSubstr("prompt tokens served from its cache (cache_n): 30 of 80 on 1 of 2 requests"));
}

TEST(TtftSplit, NoTimingsSaysSo) {
  TtftSplit s = split_ttft({{9.0, kNaN, kNaN, kNaN, kNaN, kNaN}});
  EXPECT_EQ(s.requests, 0u);
  EXPECT_THAT(ttft_split_text(s), HasSubstr("not measured"));
}

TEST(TtftSplit, FirstTextWithoutTimingsIsNotReportedNotZero) {
  TtftSplit s = split_ttft({{10.0, 4.0, kNaN, kNaN, 10, 0}});
  EXPECT_EQ(s.with_first_text_timings, 0u);
  EXPECT_THAT(ttft_split_text(s), HasSubstr("decode before the first text: not reported"));
  EXPECT_DOUBLE_EQ(s.outside_ms, 6.0);
}

TEST(TtftSplit, TheRuntimesLoggedUpkeepIsSaidAsPartOfTheOutside) {
  TtftSplit s = split_ttft({{10.0, 4.0, 0.5, 1, 10, 0}});
  add_upkeep(s, "prompt cache update", {0.2, 0.4, 3.0});
  EXPECT_EQ(s.upkeep_n, 3u);
  EXPECT_DOUBLE_EQ(s.upkeep_ms, 0.4);
  EXPECT_THAT(
      ttft_split_text(s),
      HasSubstr("of which the runtime logged prompt cache update before a task's prompt: median 0.400 ms, largest 3.000 ms over 3 tasks"));
}

}  // namespace
}  // namespace fp
