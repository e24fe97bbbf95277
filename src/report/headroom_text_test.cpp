#include "report/headroom_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

Headroom sample() {
  HeadroomInput in;
  in.shape = {4, 2, 128, 128};
  in.k = in.v = {"f16", 1, 2};
  in.cells = 8192;
  in.cells_source = "cells in the runtime's KV cache line";
  in.runtime_kv_mib = 32.0;
  in.compute_mib = 19.0;
  in.free = {{"CPU", 4096ull * 100000, "host MemAvailable, lowest of 7 readings while serving"}};
  return *compute_headroom(in).headroom;
}

TEST(HeadroomText, ResultLinesSayEachFigureAndWhatItRestsOn) {
  const auto lines = headroom_lines(sample(), "");
  std::string all;
  for (const auto& [k, v] : lines) all += k + " = " + v + "\n";
  EXPECT_THAT(all, HasSubstr("headroom.kv_bytes_per_token = 4096 (4 layers x 2 KV heads x head size 128, K f16, V f16)\n"));
  EXPECT_THAT(all, HasSubstr("headroom.kv_cache_mib = 32.000 for 8192 cells (cells in the runtime's KV cache line): agrees with the runtime's own 32.00 MiB\n"));
  EXPECT_THAT(all, HasSubstr("headroom.memory_left_mib.CPU = 390.625 (host MemAvailable"));
  EXPECT_THAT(all, HasSubstr("headroom.more_tokens = 100000 (tokens of KV cache the memory left on CPU holds at 4096 bytes each)"));
  EXPECT_THAT(all, HasSubstr("headroom.context_fit_tokens = 108192 (8192 now + 100000;"));
  const auto none = headroom_lines(std::nullopt, "attached: no model file");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].second, "not computed: attached: no model file");
}

TEST(HeadroomText, JsonRoundTripsForTheHtmlReport) {
  const Headroom h = sample();
  const auto j = nlohmann::json::parse(headroom_json(h, "").dump());
  std::string why;
  const auto back = headroom_from_json(j, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(headroom_lines(back, ""), headroom_lines(h, ""));
  EXPECT_FALSE(headroom_from_json(nlohmann::json::parse(R"({"not_computed": "attached"})"), &why));
  EXPECT_EQ(why, "attached");
  EXPECT_FALSE(headroom_from_json(nlohmann::json(), &why));
  EXPECT_THAT(why, HasSubstr("predates headroom"));
}

TEST(HeadroomText, AbSaysWhatTheFlagDoesToTheComputeBufferInTokens) {
  Headroom off = sample(), on = sample();
  off.compute_mib = 87.0;
  on.compute_mib = 19.0;
  const auto lines = flag_memory_change(off, on);
  ASSERT_GE(lines.size(), 2u);
  // 68 MiB at 4096 bytes per token.
  EXPECT_EQ(lines[0], "the flag on changes the compute buffer by -68.000 MiB (87.000 -> 19.000): 17408 tokens of KV cache at 4096 bytes each freed");
  EXPECT_EQ(lines[1], "KV cache unchanged: 32.000 MiB (4096 bytes per token)");
  EXPECT_TRUE(flag_memory_change(std::nullopt, on).empty());
}

}  // namespace
}  // namespace fp
