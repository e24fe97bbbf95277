#include "report/headroom_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "measure/shared_card.h"

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

// The 8B shape (131072 bytes per token at f16) on one GPU beside an embedder and a stranger.
Headroom sharing(double reranker_mib, long deployed) {
  HeadroomInput in;
  in.shape = {32, 8, 128, 128};
  in.k = in.v = {"f16", 1, 2};
  in.cells = 8192;
  in.cells_source = "cells in the runtime's KV cache line";
  in.kv_mib_by_device = {{"CUDA0", 1024.0}};
  in.free = {{"CUDA0", 20000ull * 1024 * 1024, "NVML free memory of GPU 0 (NVIDIA H100 80GB HBM3), lowest of 3 readings while serving"}};
  in.others = {{"CUDA0", "GPU 0 (NVIDIA H100 80GB HBM3)", true, "", {{4242, "llama-server", "llama-server --port 8081", 6144.0, ""}, {77, "python3", "", std::nullopt, ""}}}};
  in.neighbours = {{"embedder", "--port 8081", "CUDA0", 6144}, {"reranker", "--port 8082", "CUDA0", reranker_mib}};
  in.check_deployed = true;
  in.deployed_context = deployed;
  Headroom h = *compute_headroom(in).headroom;
  share_card(in, h);
  return h;
}

TEST(HeadroomText, SaysWhoElseHoldsTheCardAndWhetherTheDeployedContextFits) {
  const Headroom h = sharing(4000, 131072);
  std::string all;
  for (const auto& [k, v] : headroom_lines(h, "")) all += k + " = " + v + "\n";
  EXPECT_THAT(all, HasSubstr("headroom.others.CUDA0 = 2 processes on GPU 0 (NVIDIA H100 80GB HBM3): pid 4242 llama-server, 6144.000 MiB "
                             "(neighbour embedder); pid 77 python3, memory not known\n"));
  EXPECT_THAT(all, HasSubstr("headroom.neighbour.embedder = running on CUDA0 (pid 4242 llama-server, 6144.000 MiB; "
                             "found among the processes NVML lists on GPU 0 (NVIDIA H100 80GB HBM3)): already out of the memory left (declared 6144.000 MiB)\n"));
  EXPECT_THAT(all, HasSubstr("headroom.neighbour.reranker = not running on CUDA0 (no process NVML lists on GPU 0 (NVIDIA H100 80GB HBM3) "
                             "matches \"--port 8082\"): its declared 4000.000 MiB reserved from the memory left\n"));
  EXPECT_THAT(all, HasSubstr("headroom.deployed_context = 131072 (headroom.deployed_context): fits beside embedder (running, 6144.000 MiB) and "
                             "reranker (not running: 4000.000 MiB reserved) and 1 other process on GPU 0 (NVIDIA H100 80GB HBM3) "
                             "[pid 77 python3, memory not known]: 136192 tokens fit after 4000.000 MiB reserved, 5120 to spare (the first to run out: CUDA0)\n"));
  EXPECT_FALSE(deployed_context_failure(h, ""));
}

TEST(HeadroomText, ADeployedContextThatDoesNotFitFailsSayingByHowMuch) {
  const Headroom h = sharing(5000, 131072);
  const auto failure = deployed_context_failure(h, "");
  ASSERT_TRUE(failure);
  // 128192 tokens fit; 2880 tokens short = 360 MiB at 131072 bytes each.
  EXPECT_EQ(*failure, "deployed context 131072 does not fit beside embedder (running, 6144.000 MiB) and reranker (not running: "
                      "5000.000 MiB reserved) and 1 other process on GPU 0 (NVIDIA H100 80GB HBM3) [pid 77 python3, memory not known]: "
                      "128192 tokens fit, short by 2880 tokens (360.000 MiB of KV cache at 131072 bytes/token)");
  std::string all;
  for (const auto& [k, v] : headroom_lines(h, "")) all += k + " = " + v + "\n";
  EXPECT_THAT(all, HasSubstr("headroom.deployed_context = 131072 (headroom.deployed_context): DOES NOT FIT: deployed context 131072"));
  // No headroom, or no memory left measured: not checked is a failure too (no evidence is no pass).
  EXPECT_THAT(*deployed_context_failure(std::nullopt, "the model's attention shape is not known"),
              HasSubstr("headroom.deployed_context not checked: the headroom was not computed (the model's attention shape is not known)"));
  Headroom unmeasured = h;
  unmeasured.deployed->checked = false;
  unmeasured.deployed->not_checked = "no memory left was measured where the cache lives";
  EXPECT_EQ(*deployed_context_failure(unmeasured, ""), "deployed context 131072 not checked: no memory left was measured where the cache lives");
}

TEST(HeadroomText, SharingRoundTripsThroughJsonAndOlderResultsStillRead) {
  const Headroom h = sharing(5000, 131072);
  const auto j = nlohmann::json::parse(headroom_json(h, "").dump());
  EXPECT_EQ(j["deployed"]["fits"], false);
  EXPECT_EQ(j["deployed"]["short_by_tokens"], 2880);
  EXPECT_EQ(j["neighbours"][1]["state"], "not running");
  std::string why;
  const auto back = headroom_from_json(j, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(headroom_lines(back, ""), headroom_lines(h, ""));
  EXPECT_EQ(deployed_context_failure(back, ""), deployed_context_failure(h, ""));
  nlohmann::json old = j;  // a result written before several models on one card
  old.erase("others");
  old.erase("neighbours");
  old.erase("deployed");
  const auto before = headroom_from_json(old, &why);
  ASSERT_TRUE(before) << why;
  EXPECT_TRUE(before->others.empty());
  EXPECT_FALSE(before->deployed);
}

TEST(HeadroomText, OnTheCpuNothingIsListedAndItSaysWhy) {
  HeadroomInput in;
  in.shape = {2, 2, 32, 32};
  in.k = in.v = {"f16", 1, 2};
  in.cells = 2048;
  in.free = {{"CPU", 1000ull * 1024 * 1024, "host MemAvailable"}};
  in.others = {{"CPU", "the host", false, "the host's other processes are not listed: MemAvailable already leaves out what they hold", {}}};
  Headroom h = *compute_headroom(in).headroom;
  share_card(in, h);
  const auto lines = headroom_lines(h, "");
  std::string all;
  for (const auto& [k, v] : lines) all += k + " = " + v + "\n";
  EXPECT_THAT(all, HasSubstr("headroom.others.CPU = not listed: the host's other processes are not listed: MemAvailable already leaves out what they hold\n"));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("headroom.deployed_context")));  // no "headroom" block: nothing to check
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
