#include "evidence/log_scan.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>

#include <limits>


namespace fp {
namespace {

using fp::testing::h200_run;
using fp::testing::llama_signatures;

LogScan scan_text(const std::string& text) {
  return scan_log(split_records(text, llama_signatures()), llama_signatures());
}

TEST(LogScan, MidFaOnRequestedEnabledWithMemoryAndSplits) {
  const LogScan& s = h200_run("mid_fa_on").log;
  ResolvedState r = s.resolved();
  ASSERT_TRUE(r.fused.has_value());
  EXPECT_TRUE(*r.fused);
  EXPECT_EQ(r.requested, "enabled");
  EXPECT_FALSE(r.by_decision);
  ASSERT_EQ(r.quotes.size(), 1u);
  EXPECT_EQ(r.quotes[0].text, "llama_context: flash_attn    = enabled");
  EXPECT_EQ(s.split_counts(), std::vector<int>({2}));
  ASSERT_FALSE(s.graph_nodes.empty());
  EXPECT_EQ(s.graph_nodes.back().value, 131);
  EXPECT_DOUBLE_EQ(s.kv_mib_by_device().at("CUDA0"), 256.0);  // the final context, not the 0.00 fit pass
  EXPECT_DOUBLE_EQ(s.compute_mib_by_device().at("CUDA0"), 152.01);
  EXPECT_DOUBLE_EQ(s.compute_mib_by_device().at("CUDA_Host"), 48.01);
  ASSERT_TRUE(s.kv_total());
  EXPECT_DOUBLE_EQ(s.kv_total()->mib, 256.0);
  EXPECT_EQ(s.kv_total()->cells, 16384);
  EXPECT_EQ(s.kv_total()->k_type, "f16");
  EXPECT_DOUBLE_EQ(s.kv_total()->v_mib, 128.0);
  EXPECT_EQ(s.compute_buffers.size(), 4u);  // two contexts x two devices; the ~llama_context "is" lines excluded
}

TEST(LogScan, MidFaAutoResolvedEnabledQuoted) {
  ResolvedState r = h200_run("mid_fa_auto").log.resolved();
  ASSERT_TRUE(r.fused.has_value());
  EXPECT_TRUE(*r.fused);
  EXPECT_EQ(r.requested, "auto");
  EXPECT_TRUE(r.by_decision);
  ASSERT_EQ(r.quotes.size(), 2u);
  EXPECT_EQ(r.quotes[1].text, "sched_reserve: Flash Attention was auto, set to enabled");
  EXPECT_GT(r.quotes[1].line, r.quotes[0].line);
}

TEST(LogScan, Q5_1SaysEnabledWithTenSplitsAndQuantizedKv) {
  const LogScan& s = h200_run("mid_fa_on_q5_1").log;
  EXPECT_EQ(s.resolved().fused, std::optional<bool>(true));
  EXPECT_EQ(s.split_counts(), std::vector<int>({10}));
  EXPECT_EQ(s.graph_splits.back().quote.text, "sched_reserve: graph splits = 10");
  ASSERT_TRUE(s.kv_total());
  EXPECT_EQ(s.kv_total()->k_type, "q5_1");
  EXPECT_EQ(s.kv_total()->v_type, "q5_1");
  EXPECT_TRUE(s.reasons.empty());
  EXPECT_TRUE(s.fatal.empty());
}

TEST(LogScan, Hd48AutoDisabledWithReason) {
  const LogScan& s = h200_run("r2_hd48_auto").log;
  ResolvedState r = s.resolved();
  EXPECT_EQ(r.fused, std::optional<bool>(false));
  EXPECT_EQ(r.quotes.back().text, "sched_reserve: Flash Attention was auto, set to disabled");
  ASSERT_EQ(s.reasons.size(), 2u);
  EXPECT_EQ(s.reasons[0].text,
            "sched_reserve: layer 0 is assigned to device CUDA0 but the Flash Attention tensor is assigned to "
            "device CPU (usually due to missing support)");
}

TEST(LogScan, PartialOffloadSplitsPerBatchSizeAndKvPerDevice) {
  const LogScan& s = h200_run("r2_partial_ngl2").log;
  EXPECT_EQ(s.split_counts(), std::vector<int>({35, 2}));
  ASSERT_GE(s.graph_splits.size(), 2u);
  EXPECT_EQ(s.graph_splits[0].batch, 512);
  EXPECT_EQ(s.graph_splits[1].batch, 1);
  EXPECT_DOUBLE_EQ(s.kv_mib_by_device().at("CPU"), 96.0);
  EXPECT_DOUBLE_EQ(s.kv_mib_by_device().at("CUDA0"), 32.0);
}

TEST(LogScan, PlainLinesAndBuild11669Wording) {
  LogScan s = scan_text(
      "llama_context: flash_attn    = auto\n"
      "llama_context: resolve_fused_ops: Flash Attention enabled\n"
      "llama_kv_cache:        CPU KV buffer size =    64.00 MiB\n");
  ResolvedState r = s.resolved();
  EXPECT_EQ(r.fused, std::optional<bool>(true));
  EXPECT_TRUE(r.by_decision);
  EXPECT_EQ(r.quotes.back().text, "llama_context: resolve_fused_ops: Flash Attention enabled");
  EXPECT_EQ(r.quotes.back().line, 2u);
  EXPECT_DOUBLE_EQ(s.kv_mib_by_device().at("CPU"), 64.0);
}

TEST(LogScan, OlderBuildForcedOffAndNumericRequest) {
  LogScan s = scan_text(
      "llama_new_context_with_model: flash_attn = 1\n"
      "llama_new_context_with_model: flash_attn requires n_embd_head_k == n_embd_head_v - forcing off\n");
  ResolvedState r = s.resolved();
  EXPECT_EQ(r.requested, "1");
  EXPECT_EQ(r.fused, std::optional<bool>(false));
  EXPECT_EQ(s.states.back().reason, "n_embd_head_k == n_embd_head_v");
}

TEST(LogScan, AutoWithoutResolutionIsUndecided) {
  LogScan s = scan_text("llama_context: flash_attn    = auto\n");
  EXPECT_FALSE(s.resolved().fused.has_value());
  EXPECT_EQ(s.resolved().requested, "auto");
  EXPECT_FALSE(s.empty());
}

TEST(LogScan, FatalQuantizedV) {
  LogScan s = scan_text("llama_init_from_model: quantized V cache was requested, but this requires Flash Attention\n");
  ASSERT_EQ(s.fatal.size(), 1u);
}

TEST(LogScan, NothingMatchesInUnrelatedTextOrPromptEcho) {
  LogScan s = scan_text(
      "hello\nsrv  log_server_r: request:  {\"prompt\": \"flash_attn = enabled\"}\n0.00.1.2 nonsense\n");
  EXPECT_TRUE(s.empty());
}

// A count beyond int clamps (atoi's overflow was undefined behaviour; found while fuzzing).
TEST(LogScan, CountBeyondIntClamps) {
  const auto& sigs = fp::testing::llama_signatures();
  LogScan scan = scan_log(split_records("llama_context: graph splits = 99999999999999\n", sigs), sigs);
  ASSERT_EQ(scan.graph_splits.size(), 1u);
  EXPECT_EQ(scan.graph_splits[0].value, std::numeric_limits<int>::max());
}

}  // namespace
}  // namespace fp
