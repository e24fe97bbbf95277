// "Active, degraded" and the build's compiled K/V pairs on the live H200 recordings (a replay, beside
// the live CTest runtime-words:degraded): Debian's build 11669 converts a K/V pair it has no fused
// vector kernel for to f16 and says so once ("... converting K and V to f16 instead (slow)");
// its tally shows the conversion kernels beside the fused ones, and the vector kernel reading f16.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "evidence/causes.h"
#include "evidence/verdict.h"
#include "flow/gates/upgrade_gate.h"
#include "golden/fingerprint.h"
#include "testing/recorded_runs.h"

namespace fp {
namespace {

using RecordedRun = fp::testing::Run;

Verdict verdict_of(const RecordedRun& run) {
  VerdictInput in = verdict_input(fp::testing::llama_signatures());
  in.log = &run.log;
  in.placement = &run.placement;
  in.kernels = &run.kernels;
  in.expect_backend = "CUDA0";
  return decide(in);
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(DegradedReplay, Q5_1IsActiveDegradedWithTheRuntimesLineCauseRemedyAndCost) {
  const RecordedRun run = fp::testing::load_run("h200-live", "fa_on_q5_1.quiet");
  const Verdict v = verdict_of(run);
  ASSERT_EQ(v.activity, Activity::Active);
  ASSERT_TRUE(v.degraded.has_value()) << v.explanation;
  const Degradation& d = *v.degraded;
  EXPECT_EQ(d.k_type, "q5_1");
  EXPECT_EQ(d.v_type, "q5_1");
  EXPECT_EQ(d.converted_to, "f16");
  EXPECT_EQ(d.line, 150u);
  EXPECT_TRUE(contains(d.quote, "no FlashAttention vector kernel compiled for K/V types q5_1-q5_1, converting K and V to f16 instead (slow)"))
      << d.quote;
  EXPECT_EQ(d.compiled_pairs, (std::vector<std::string>{"q4_0-q4_0", "q8_0-q8_0", "f16-f16", "bf16-bf16"}));
  EXPECT_TRUE(contains(d.cause, "no FlashAttention vector kernel for K/V q5_1-q5_1")) << d.cause;
  EXPECT_TRUE(contains(d.remedy, "(q4_0-q4_0, q8_0-q8_0, f16-f16, bf16-bf16)")) << d.remedy;
  EXPECT_TRUE(contains(d.remedy, "\"q5_1-q5_1\" in GGML_CUDA_FA_QUANTS")) << d.remedy;
  // level 3 says it too: the vector kernel read f16-f16 while the cache holds q5_1-q5_1
  EXPECT_TRUE(contains(d.kernels_say, "fused kernels read f16-f16 while the KV cache holds q5_1-q5_1")) << d.kernels_say;
  // the cost: dequantize_block<..., dequantize_q5_1, __half>, 261948 of 4333538 ns of GPU time
  ASSERT_TRUE(d.conversion_share.has_value());
  EXPECT_NEAR(*d.conversion_share, 261948.0 / 4333538.0, 1e-9);
  ASSERT_FALSE(d.conversion_kernels.empty());
  EXPECT_TRUE(contains(d.conversion_kernels.front(), "dequantize_block")) << d.conversion_kernels.front();
  EXPECT_TRUE(contains(v.explanation, "active, degraded: this build of ggml-cuda")) << v.explanation;
  EXPECT_TRUE(contains(format_verdict(v), "verdict: active, degraded")) << format_verdict(v);
}

TEST(DegradedReplay, Q4_1AndQ8_0Q4_0AreDegradedToo) {
  for (const char* name : {"fa_on_q4_1.verbose", "fa_on_q8_0_q4_0.quiet"}) {
    const Verdict v = verdict_of(fp::testing::load_run("h200-live", name));
    ASSERT_EQ(v.activity, Activity::Active) << name;
    ASSERT_TRUE(v.degraded.has_value()) << name;
    EXPECT_FALSE(v.degraded->quote.empty()) << name;
    EXPECT_FALSE(v.degraded->kernels_say.empty()) << name;
  }
}

TEST(DegradedReplay, CompiledPairsAndF16AreNotDegraded) {
  for (const char* name : {"fa_on.verbose", "fa_on.quiet"}) {
    const Verdict v = verdict_of(fp::testing::load_run("h200-live", name));
    EXPECT_EQ(v.activity, Activity::Active) << name;
    EXPECT_FALSE(v.degraded.has_value()) << name;
  }
  // not active is never "degraded"
  EXPECT_FALSE(verdict_of(fp::testing::load_run("h200-live", "fa_off.quiet")).degraded.has_value());
  // the May 2026 build with a compiled q8_0 pair: its mma prefill converts q8_0 (dequantize_block_q8_0_f16)
  // but the vector kernel reads the cache's own type, (ggml_type)8: not degraded
  const RecordedRun q8 = fp::testing::load_run("h200", "r2_q8_0");
  EXPECT_EQ(q8.kernels.fused_kv_types, (std::vector<std::string>{"q8_0-q8_0"}));
  EXPECT_EQ(q8.kernels.conversion_types, (std::vector<std::string>{"q8_0"}));
  EXPECT_FALSE(verdict_of(q8).degraded.has_value());
}

TEST(DegradedReplay, TheKernelsAloneSayItWhenTheLineIsMissing) {
  RecordedRun run = fp::testing::load_run("h200-live", "fa_on_q5_1.quiet");
  run.log.degraded.clear();  // a log without the runtime's warning (another verbosity, an older build)
  const Verdict v = verdict_of(run);
  ASSERT_TRUE(v.degraded.has_value());
  EXPECT_TRUE(v.degraded->quote.empty());
  EXPECT_EQ(v.degraded->k_type, "q5_1");
  EXPECT_EQ(v.degraded->converted_to, "f16-f16");
  EXPECT_TRUE(contains(v.degraded->cause, "K/V q5_1-q5_1")) << v.degraded->cause;
  // without a tally nothing says it: the log alone has no line, level 3 has no records
  run.kernels = KernelSummary{};
  EXPECT_FALSE(verdict_of(run).degraded.has_value());
}

// A head size the vector kernel lacks (Phi-3-mini's 96): only the mma kernels ran, reading f16, while
// the cache is q8_0, a compiled pair; the runtime prints no line. The recorded q8_0 run (head size
// 128) without its vector kernels is what such a model's decode looks like at level 3.
TEST(DegradedReplay, AHeadSizeWithoutAVectorKernelIsDegradedByTheKernels) {
  const RecordedRun q8 = fp::testing::load_run("h200", "r2_q8_0");
  auto tally = read_kernel_tally(fp::testing::fixture("logs/h200/r2_q8_0.kernels.tsv"));
  ASSERT_TRUE(tally) << tally.error().message;
  auto& lines = tally->kernels;
  lines.erase(std::remove_if(lines.begin(), lines.end(),
                             [](const KernelLine& k) { return k.name.find("flash_attn_ext_vec") != std::string::npos; }),
              lines.end());
  RecordedRun mma_only = q8;
  mma_only.kernels = classify_kernels(*tally, fp::testing::llama_signatures());
  EXPECT_TRUE(mma_only.kernels.fused_kv_types.empty());
  EXPECT_EQ(mma_only.kernels.fused_reads_kv, std::vector<std::string>{"f16-f16"});

  VerdictInput in = verdict_input(fp::testing::llama_signatures());
  in.log = &mma_only.log;
  in.placement = &mma_only.placement;
  in.kernels = &mma_only.kernels;
  in.expect_backend = "CUDA0";
  in.head_size = 96;
  const Verdict v = decide(in);
  ASSERT_EQ(v.activity, Activity::Active);
  ASSERT_TRUE(v.degraded.has_value()) << v.explanation;
  EXPECT_TRUE(v.degraded->quote.empty());
  EXPECT_EQ(v.degraded->k_type, "q8_0");
  EXPECT_EQ(v.degraded->converted_to, "f16-f16");
  EXPECT_TRUE(contains(v.degraded->kernels_say,
                       "fused kernels read only f16-f16 (no vector kernel ran: head size 96) "
                       "while the KV cache holds q8_0-q8_0"))
      << v.degraded->kernels_say;
  EXPECT_TRUE(contains(v.degraded->cause, "no version for head size 96")) << v.degraded->cause;
  EXPECT_TRUE(contains(v.degraded->remedy, "f16 K/V (-ctk f16 -ctv f16)")) << v.degraded->remedy;
  ASSERT_TRUE(v.degraded->conversion_share.has_value());
  EXPECT_GT(*v.degraded->conversion_share, 0.0);

  // Head size 128 has the vector kernel: the same kernels are a prefill or a large batch of a
  // compiled pair, converted as the runtime always does there. Not said; nor without a head size.
  for (int head : {128, 0}) {
    in.head_size = head;
    EXPECT_FALSE(decide(in).degraded.has_value()) << head;
  }
  // With the vector kernel reading the cache's own q8_0 (the recording as it is), head size 96 is moot.
  in.head_size = 96;
  in.kernels = &q8.kernels;
  EXPECT_FALSE(decide(in).degraded.has_value());
}

// The same, live: Phi-3-mini's shape (head size 96) on an H100, `flashproof matrix --kv f16,q8_0,q5_1`
// (fixtures/logs/h100-shapes/call-5). No conversion line in the log; the head size read from the
// log's print_info line, as attach mode and `explain` without --model do.
TEST(DegradedReplay, LivePhi3HeadSize96IsDegradedByItsKernels) {
  const auto& sigs = fp::testing::llama_signatures();
  struct Row {
    const char* kv;
    bool degraded;
    double share;  // dequantize kernels' ns over the tally's total (the .kernels.tsv)
  };
  for (const Row& row : {Row{"f16", false, 0}, Row{"q8_0", true, 2372371.0 / 92801877.0}, Row{"q5_1", true, 5993564.0 / 94182196.0}}) {
    const RecordedRun run = fp::testing::load_run("h100-hd96", std::string("phi3_fa_on_") + row.kv);
    EXPECT_TRUE(run.log.degraded.empty()) << row.kv;  // the runtime says nothing
    VerdictInput in = verdict_input(sigs);
    in.log = &run.log;
    in.placement = &run.placement;
    in.kernels = &run.kernels;
    in.expect_backend = "CUDA0";
    in.head_size = head_size_from_log(run.records, sigs.causes);
    EXPECT_EQ(in.head_size, 96) << row.kv;
    const Verdict v = decide(in);
    ASSERT_EQ(v.activity, Activity::Active) << row.kv << ": " << v.explanation;
    ASSERT_EQ(v.degraded.has_value(), row.degraded) << row.kv << ": " << v.explanation;
    if (!row.degraded) continue;
    EXPECT_EQ(v.degraded->k_type, row.kv);
    EXPECT_EQ(v.degraded->converted_to, "f16-f16");
    EXPECT_TRUE(contains(v.degraded->cause, "no version for head size 96")) << v.degraded->cause;
    ASSERT_TRUE(v.degraded->conversion_share.has_value()) << row.kv;
    EXPECT_NEAR(*v.degraded->conversion_share, row.share, 1e-9) << row.kv;
    // Head size 128 would have had the vector kernel: the same kernels are not called degraded there.
    in.head_size = 128;
    EXPECT_FALSE(decide(in).degraded.has_value()) << row.kv;
  }
}

TEST(DegradedReplay, BuildIdentityFromSystemInfo) {
  const RecordedRun live = fp::testing::load_run("h200-live", "fa_on.quiet");
  EXPECT_EQ(live.log.build_kernels.fa_pairs_field(), "q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16");
  EXPECT_EQ(live.log.build_kernels.gpu_archs, "500,610,700,750,800,860,890,900");
  EXPECT_EQ(live.log.build_kernels.compiles("q4_0", "q4_0"), std::optional<bool>(true));
  EXPECT_EQ(live.log.build_kernels.compiles("q5_1", "q5_1"), std::optional<bool>(false));
  // the May 2026 upstream build lists its architectures, not its pairs
  const RecordedRun may = fp::testing::load_run("h200", "mid_fa_on");
  EXPECT_EQ(may.log.build_kernels.gpu_archs, "900");
  EXPECT_FALSE(may.log.build_kernels.fa_pairs_stated);
  EXPECT_EQ(may.log.build_kernels.compiles("q4_0", "q4_0"), std::nullopt);
  // the CPU build here prints a system_info without a CUDA section
  const auto& cpu = fp::testing::load_run_log_only("cpu", "b11669_tiny_fa_on_lv4");
  EXPECT_FALSE(cpu.log.build_kernels.stated());
}

TEST(DegradedReplay, PairChangeBetweenBuilds) {
  const FaPairChange c = fa_pair_change("q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16", "q8_0-q8_0,f16-f16,bf16-bf16,q5_1-q5_1");
  EXPECT_EQ(c.added, std::vector<std::string>{"q5_1-q5_1"});
  EXPECT_EQ(c.removed, std::vector<std::string>{"q4_0-q4_0"});
  EXPECT_TRUE(c.any());
  EXPECT_FALSE(fa_pair_change("f16-f16,q8_0-q8_0", "q8_0-q8_0,f16-f16").any());
  const FaPairChange all = fa_pair_change("q4_0-q4_0", "all");
  EXPECT_TRUE(all.any());
  EXPECT_TRUE(all.all_after);
  EXPECT_TRUE(fa_pair_compiled("all", "q5_1-q5_1"));
  EXPECT_FALSE(fa_pair_compiled("q4_0-q4_0,f16-f16", "q5_1-q5_1"));
}

// What the upgrade gate says when a new build compiles other pairs, and which cases it changes.
TEST(DegradedReplay, TheGateNamesTheCasesWhosePairEntersOrLeaves) {
  const std::string before = "q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16", after = "q8_0-q8_0,f16-f16,bf16-bf16,q5_1-q5_1";
  const std::string text = compiled_pairs_change_text(fa_pair_change(before, after), before, after,
                                                      {{"chat-f16", "f16-f16"}, {"long-q5", "q5_1-q5_1"}, {"small-q4", "q4_0-q4_0"}});
  EXPECT_TRUE(contains(text, "the new build compiles other K/V pairs: now also q5_1-q5_1; no longer q4_0-q4_0")) << text;
  EXPECT_TRUE(contains(text, "long-q5 (q5_1-q5_1: now compiled, was converted)")) << text;
  EXPECT_TRUE(contains(text, "small-q4 (q4_0-q4_0: no longer compiled, now converted)")) << text;
  EXPECT_FALSE(contains(text, "chat-f16")) << text;
}

}  // namespace
}  // namespace fp
