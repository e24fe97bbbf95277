#include "measure/shared_card.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1024 * 1024;

// The 8B shape's attention as llama.cpp caches it at f16: 32 layers x 8 KV heads x 128 x 2 (K, V)
// x 2 bytes = 131072 bytes per token (0.125 MiB: 8 tokens per MiB), 8192 cells on CUDA0.
HeadroomInput on_one_gpu(uint64_t free_mib) {
  HeadroomInput in;
  in.shape = {32, 8, 128, 128};
  in.k = in.v = {"f16", 1, 2};
  in.cells = 8192;
  in.cells_source = "cells in the runtime's KV cache line";
  in.kv_mib_by_device = {{"CUDA0", 1024.0}};
  in.free = {{"CUDA0", free_mib * kMiB, "NVML free memory of GPU 0"}};
  OthersOn gpu{"CUDA0", "GPU 0 (NVIDIA H100 80GB HBM3)", true, "", {}};
  gpu.processes = {{4242, "llama-server", "llama-server -m embed.gguf --port 8081", 6000.0, ""},
                   {77, "python3", "python3 train.py", 1000.0, ""}};
  in.others = {gpu};
  return in;
}

Headroom shared(const HeadroomInput& in) {
  auto out = compute_headroom(in);
  EXPECT_TRUE(out.headroom) << out.why_not;
  Headroom h = *out.headroom;
  share_card(in, h);
  return h;
}

TEST(SharedCard, MatchesACommandNameOrTextOfItsCommandLine) {
  const OtherProcess p{1, "llama-server", "llama-server -m /m/embed.gguf --port 8081", 1.0, ""};
  EXPECT_TRUE(matches_process(p, "llama-server"));
  EXPECT_TRUE(matches_process(p, "--port 8081"));
  EXPECT_TRUE(matches_process(p, "embed.gguf"));
  EXPECT_FALSE(matches_process(p, "--port 8082"));
  EXPECT_FALSE(matches_process(p, ""));
}

TEST(SharedCard, ARunningNeighbourIsCountedAndOneNotRunningIsReserved) {
  HeadroomInput in = on_one_gpu(20000);
  in.neighbours = {{"embedder", "--port 8081", "CUDA0", 6144}, {"reranker", "--port 8082", "CUDA0", 2048}};
  in.check_deployed = true;
  const Headroom h = shared(in);
  ASSERT_EQ(h.neighbours.size(), 2u);
  const NeighbourOutcome& e = h.neighbours[0];
  EXPECT_EQ(e.state, NeighbourState::Running);
  ASSERT_EQ(e.processes.size(), 1u);
  EXPECT_EQ(e.processes[0].pid, 4242u);
  ASSERT_TRUE(e.used_mib);
  EXPECT_DOUBLE_EQ(*e.used_mib, 6000);
  EXPECT_DOUBLE_EQ(e.reserved_mib, 144);  // it may still grow to its declared 6144 MiB
  EXPECT_THAT(e.looked, HasSubstr("found among the processes NVML lists on GPU 0"));
  const NeighbourOutcome& r = h.neighbours[1];
  EXPECT_EQ(r.state, NeighbourState::NotRunning);
  EXPECT_DOUBLE_EQ(r.reserved_mib, 2048);
  EXPECT_THAT(r.looked, HasSubstr("no process NVML lists on GPU 0 (NVIDIA H100 80GB HBM3) matches \"--port 8082\""));
  // The processes say which neighbour each was taken for.
  EXPECT_EQ(h.others[0].processes[0].neighbour, "embedder");
  EXPECT_EQ(h.others[0].processes[1].neighbour, "");
  // 20000 MiB left less 2192 reserved = 17808 MiB = 142464 tokens, plus the 8192 cells.
  ASSERT_TRUE(h.deployed);
  EXPECT_TRUE(h.deployed->checked);
  EXPECT_EQ(h.deployed->fits, 8192 + 17808 * 8);
  EXPECT_DOUBLE_EQ(h.deployed->reserved_mib, 2192);
  EXPECT_EQ(h.deployed->deployed, 8192);  // no deployed_context: the cells it ran with
  EXPECT_THAT(h.deployed->deployed_source, HasSubstr("the cells it ran with"));
  EXPECT_TRUE(h.deployed->fits_ok());
  EXPECT_EQ(h.deployed->beside,
            "embedder (running, 6000.000 MiB, 144.000 MiB more reserved) and reranker (not running: 2048.000 MiB reserved) and "
            "1 other process on GPU 0 (NVIDIA H100 80GB HBM3) [pid 77 python3, 1000.000 MiB]");
  // The headroom's own context fit stays what the memory left holds, reservations apart.
  EXPECT_EQ(h.context_fit, 8192 + 20000 * 8);
}

TEST(SharedCard, ADeployedContextThatDoesNotFitSaysByHowMuch) {
  HeadroomInput in = on_one_gpu(20000);
  in.neighbours = {{"reranker", "--port 8082", "CUDA0", 4000}};
  in.check_deployed = true;
  in.deployed_context = 131072;
  const Headroom h = shared(in);
  ASSERT_TRUE(h.deployed && h.deployed->checked);
  // (20000 - 4000) MiB x 8 tokens per MiB + 8192 cells = 136192: fits with 5120 to spare.
  EXPECT_EQ(h.deployed->fits, 136192);
  EXPECT_TRUE(h.deployed->fits_ok());
  in.neighbours[0].mib = 5000;  // 1000 MiB more reserved: 8000 tokens fewer
  const Headroom tight = shared(in);
  ASSERT_TRUE(tight.deployed && tight.deployed->checked);
  EXPECT_EQ(tight.deployed->fits, 128192);
  EXPECT_FALSE(tight.deployed->fits_ok());
  EXPECT_EQ(tight.deployed->short_by, 131072 - 128192);
  EXPECT_EQ(tight.deployed->limited_by, "CUDA0");
}

TEST(SharedCard, ReservationsBeyondTheMemoryLeftFitLessThanTheCellsItRan) {
  HeadroomInput in = on_one_gpu(100);
  in.neighbours = {{"big", "nothing-like-it", "CUDA0", 300}};
  in.check_deployed = true;
  const Headroom h = shared(in);
  ASSERT_TRUE(h.deployed && h.deployed->checked);
  EXPECT_EQ(h.deployed->fits, 8192 - 200 * 8);  // 200 MiB short before the first further token
  EXPECT_EQ(h.deployed->short_by, 200 * 8);
}

TEST(SharedCard, EachProcessIsTakenForOneNeighbourOnly) {
  HeadroomInput in = on_one_gpu(20000);
  in.others[0].processes.push_back({4243, "llama-server", "llama-server -m chat.gguf --port 8090", 3000.0, ""});
  // Both match "llama-server": the first takes both processes, the second finds none left.
  in.neighbours = {{"a", "llama-server", "CUDA0", 9000}, {"b", "llama-server", "CUDA0", 500}};
  in.check_deployed = true;
  const Headroom h = shared(in);
  EXPECT_EQ(h.neighbours[0].state, NeighbourState::Running);
  EXPECT_EQ(h.neighbours[0].processes.size(), 2u);
  EXPECT_DOUBLE_EQ(h.neighbours[0].reserved_mib, 0);  // 9000 held, 9000 declared
  EXPECT_EQ(h.neighbours[1].state, NeighbourState::NotRunning);
  EXPECT_DOUBLE_EQ(h.neighbours[1].reserved_mib, 500);
}

TEST(SharedCard, ANeighbourWhoseMemoryIsNotKnownIsCountedAsItIs) {
  HeadroomInput in = on_one_gpu(20000);
  in.others[0].processes[0].mib.reset();  // NVML_VALUE_NOT_AVAILABLE
  in.neighbours = {{"embedder", "--port 8081", "CUDA0", 6144}};
  const Headroom h = shared(in);
  EXPECT_EQ(h.neighbours[0].state, NeighbourState::Running);
  EXPECT_FALSE(h.neighbours[0].used_mib);
  EXPECT_DOUBLE_EQ(h.neighbours[0].reserved_mib, 0);
  EXPECT_FALSE(h.deployed);  // no "headroom" block in the case: nothing to check
}

TEST(SharedCard, ANeighbourOnAnotherDeviceChangesNothing) {
  HeadroomInput in = on_one_gpu(20000);
  in.neighbours = {{"other-card", "x", "CUDA1", 70000}};
  in.check_deployed = true;
  const Headroom h = shared(in);
  EXPECT_EQ(h.neighbours[0].state, NeighbourState::Elsewhere);
  EXPECT_EQ(h.deployed->fits, 8192 + 20000 * 8);
}

TEST(SharedCard, WithoutAProcessListANeighbourIsReservedAndTheReasonSaid) {
  HeadroomInput in = on_one_gpu(20000);
  in.others[0] = {"CUDA0", "GPU 0", false, "NVML could not list its processes: Insufficient Permissions", {}};
  in.neighbours = {{"embedder", "--port 8081", "CUDA0", 6144}};
  in.check_deployed = true;
  const Headroom h = shared(in);
  EXPECT_EQ(h.neighbours[0].state, NeighbourState::NotRunning);
  EXPECT_THAT(h.neighbours[0].looked, HasSubstr("not looked for: NVML could not list"));
  EXPECT_EQ(h.deployed->fits, 8192 + (20000 - 6144) * 8);
}

TEST(SharedCard, OnTheCpuTheHostProcessesMatchingANeighbourCount) {
  HeadroomInput in;
  in.shape = {2, 2, 32, 32};  // 512 bytes per token at f16
  in.k = in.v = {"f16", 1, 2};
  in.cells = 2048;
  in.free = {{"CPU", 20000 * kMiB, "host MemAvailable"}};
  in.others = {{"CPU", "the host", false, "the host's other processes are not listed", {{900, "sleep", "sleep 600 fp-neighbour-x", 1.5, ""}}}};
  in.neighbours = {{"x", "fp-neighbour-x", "CPU", 1.5}, {"y", "fp-neighbour-y", "CPU", 30000}};
  in.check_deployed = true;
  in.deployed_context = 50'000'000;
  const Headroom h = shared(in);
  EXPECT_EQ(h.neighbours[0].state, NeighbourState::Running);
  EXPECT_EQ(h.neighbours[1].state, NeighbourState::NotRunning);
  EXPECT_THAT(h.neighbours[1].looked, HasSubstr("no process of the host matches \"fp-neighbour-y\""));
  // 20000 - 30000 MiB: 10000 MiB short before any further token, 2048 per MiB.
  EXPECT_EQ(h.deployed->fits, 2048 - 10000L * 2048);
  EXPECT_EQ(h.deployed->short_by, 50'000'000 - h.deployed->fits);
  in.neighbours.pop_back();
  const Headroom alone = shared(in);
  EXPECT_EQ(alone.deployed->fits, 2048 + 20000L * 2048);
  EXPECT_EQ(alone.deployed->short_by, 50'000'000 - alone.deployed->fits);
  EXPECT_EQ(alone.deployed->beside, "x (running, 1.500 MiB)");
  in.neighbours.clear();
  EXPECT_EQ(shared(in).deployed->beside, "the host's other processes (MemAvailable)");
}

TEST(SharedCard, WithoutMemoryLeftTheDeployedContextIsNotChecked) {
  HeadroomInput in = on_one_gpu(20000);
  in.free.clear();
  in.check_deployed = true;
  in.deployed_context = 4096;
  const Headroom h = shared(in);
  ASSERT_TRUE(h.deployed);
  EXPECT_FALSE(h.deployed->checked);
  EXPECT_FALSE(h.deployed->fits_ok());
  EXPECT_THAT(h.deployed->not_checked, HasSubstr("no memory left was measured"));
}

TEST(SharedCard, TwoGpusEachPayTheirShareOfAToken) {
  HeadroomInput in = on_one_gpu(20000);
  in.kv_mib_by_device = {{"CUDA0", 512.0}, {"CUDA1", 512.0}};
  in.free = {{"CUDA0", 20000 * kMiB, "gpu 0"}, {"CUDA1", 20000 * kMiB, "gpu 1"}};
  in.others.push_back({"CUDA1", "GPU 1", true, "", {}});
  in.neighbours = {{"embedder", "nothing-runs", "CUDA1", 4000}};
  in.check_deployed = true;
  const Headroom h = shared(in);
  // CUDA1 runs out first: 16000 MiB at half a token's 0.125 MiB = 256000 tokens.
  EXPECT_EQ(h.deployed->limited_by, "CUDA1");
  EXPECT_EQ(h.deployed->fits, 8192 + 256000);
}

}  // namespace
}  // namespace fp
