#include "evidence/kernel_set.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>


namespace fp {
namespace {

using fp::testing::h200_run;

TEST(KernelSet, DisplayNameDropsReturnTypeAndParameters) {
  EXPECT_EQ(kernel_display_name("void flash_attn_ext_vec<128, 1, (ggml_type)1, (ggml_type)1, false>(char const*, float*)"),
            "flash_attn_ext_vec<128, 1, (ggml_type)1, (ggml_type)1, false>");
  EXPECT_EQ(kernel_display_name("void soft_max_f32<true, 0, 0, float>(float const*, soft_max_params)"),
            "soft_max_f32<true, 0, 0, float>");
  EXPECT_EQ(kernel_display_name("fmha_cutlassF_f32_aligned_64x128_rf_sm80"), "fmha_cutlassF_f32_aligned_64x128_rf_sm80");
  EXPECT_EQ(kernel_display_name("  void k(int)  "), "k");
}

TEST(KernelSet, FromRecordedH200Tallies) {
  AttentionKernelSet on = attention_kernel_set(h200_run("mid_fa_on").kernels);
  EXPECT_GT(on.records, 0u);
  ASSERT_FALSE(on.fused.empty());
  EXPECT_TRUE(on.unfused.empty());
  EXPECT_TRUE(std::is_sorted(on.fused.begin(), on.fused.end()));
  AttentionKernelSet off = attention_kernel_set(h200_run("mid_fa_off").kernels);
  EXPECT_TRUE(off.fused.empty());
  EXPECT_FALSE(off.unfused.empty());
  EXPECT_NE(kernel_set_text(on).find("fused: "), std::string::npos);
  EXPECT_NE(kernel_set_text(off).find("unfused: soft_max_f32<"), std::string::npos);
}

TEST(KernelSet, SameRunTies) {
  AttentionKernelSet on = attention_kernel_set(h200_run("mid_fa_on").kernels);
  EXPECT_TRUE(compare_kernel_sets(on, on).empty());
}

TEST(KernelSet, DifferentPathIsNamedOnBothSides) {
  auto diff = compare_kernel_sets(attention_kernel_set(h200_run("mid_fa_on").kernels),
                                  attention_kernel_set(h200_run("mid_fa_off").kernels));
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_NE(diff[0].find("fused attention kernels differ: only in the evidence pass: "), std::string::npos) << diff[0];
  EXPECT_NE(diff[0].find("flash_attn_ext_f16<128, 128, 16, 4, false, false>"), std::string::npos) << diff[0];
  EXPECT_EQ(diff[0].find("only in the probed"), std::string::npos) << diff[0];
  EXPECT_NE(diff[1].find("unfused attention kernels differ: only in the probed timed configuration: soft_max_f32<"),
            std::string::npos)
      << diff[1];
}

TEST(KernelSet, OneVariantMoreIsAMismatch) {
  // Same class, one template variant more: a different kernel ran (e.g. a different tile or KV type).
  AttentionKernelSet a = attention_kernel_set(h200_run("mid_fa_on").kernels);
  AttentionKernelSet b = a;
  b.fused.push_back("void flash_attn_ext_vec<128, 1, (ggml_type)8, (ggml_type)8, false>(char const*)");
  std::sort(b.fused.begin(), b.fused.end());
  auto diff = compare_kernel_sets(a, b);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_NE(diff[0].find("only in the probed timed configuration: flash_attn_ext_vec<128, 1, (ggml_type)8, (ggml_type)8, false>"),
            std::string::npos)
      << diff[0];
}

TEST(KernelSet, EmptyCheckCannotTie) {
  AttentionKernelSet on = attention_kernel_set(h200_run("mid_fa_on").kernels);
  auto diff = compare_kernel_sets(on, AttentionKernelSet{});
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_NE(diff[0].find("has none (the probe saw no kernel: cannot tie)"), std::string::npos) << diff[0];
  EXPECT_EQ(kernel_set_text(AttentionKernelSet{}), "no kernel records");
}

TEST(KernelSet, UnderSeveralRequestsThePathMustTieNotTheVariants) {
  // Batched decode runs other variants (flash_attn_ext_vec<128, 2, ...> beside <128, 1, ...>: both
  // recorded on the H200): the same fused path, no mismatch.
  AttentionKernelSet evidence = attention_kernel_set(h200_run("mid_fa_on").kernels);
  AttentionKernelSet batched = evidence;
  batched.fused.push_back("void flash_attn_ext_vec<128, 2, (ggml_type)1, (ggml_type)1, false>(char const*)");
  std::sort(batched.fused.begin(), batched.fused.end());
  EXPECT_TRUE(compare_kernel_paths(evidence, batched).empty());
  EXPECT_FALSE(compare_kernel_sets(evidence, batched).empty());
  // A fallback only batching brings: soft_max instead of the fused kernels.
  auto diff = compare_kernel_paths(evidence, attention_kernel_set(h200_run("mid_fa_off").kernels));
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_NE(diff[0].find("fused attention kernels ran in the evidence pass only: "), std::string::npos) << diff[0];
  EXPECT_NE(diff[1].find("unfused attention kernels ran in the probed timed configuration only: soft_max_f32<"), std::string::npos)
      << diff[1];
  EXPECT_EQ(compare_kernel_paths(evidence, AttentionKernelSet{}).size(), 1u);  // no records: cannot tie
}

TEST(KernelSet, FamilySharesOfTheRecordedH200Run) {
  // fixtures/logs/h200/mid_fa_on: mma 13201492 + 56381 ns, vec 3767802, helpers 517978 + 141377 + 11167.
  const auto shares = family_shares(h200_run("mid_fa_on").kernels);
  ASSERT_EQ(shares.size(), 3u);
  const double attention = 17696197.0;
  EXPECT_EQ(shares[0].family, "fattn-mma");
  EXPECT_NEAR(shares[0].share, (13201492.0 + 56381.0) / attention, 1e-12);
  EXPECT_EQ(shares[1].family, "fattn-vec");
  EXPECT_NEAR(shares[1].share, 3767802.0 / attention, 1e-12);
  EXPECT_EQ(shares[2].family, "fattn-helpers");
  EXPECT_EQ(family_shares_text(shares), "fattn-mma 74.9%, fattn-vec 21.3%, fattn-helpers 3.8%");
  const auto off = family_shares(h200_run("mid_fa_off").kernels);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(off[0].family, "soft_max");
  EXPECT_FALSE(off[0].fused);
  EXPECT_DOUBLE_EQ(off[0].share, 1.0);
  EXPECT_EQ(family_shares_text({}), "no attention kernel");
}

TEST(KernelSet, EveryKernelRuleExampleLandsInItsOwnFamily) {
  // The first rule that matches decides: fattn_wmma must come before fattn_mma, the catch-all last.
  for (const char* runtime : {"llama-server", "vllm"}) {
    auto sigs = load_runtime_signatures(runtime);
    ASSERT_TRUE(sigs.ok()) << sigs.error().message;
    for (const auto& rule : sigs->kernels) {
      if (rule.family.empty()) continue;
      for (const auto& ex : rule.examples) {
        KernelTally t;
        t.device_timings = rule.device_timings;  // a device-timings rule reads op names, not probe kernels
        t.kernels.push_back({1, 10, ex, 0, 1});
        KernelSummary s = classify_kernels(t, *sigs);
        ASSERT_EQ(s.families.size(), 1u) << runtime << ": " << ex;
        EXPECT_EQ(s.families.begin()->first, rule.family) << runtime << ": rule " << rule.name << " example " << ex;
      }
    }
  }
}

TEST(KernelSet, KernelsOfNoFamilyAreStillCounted) {
  KernelTally t;
  t.kernels.push_back({2, 10, "void flash_attn_ext_mma_bf16<128, 128, 32, 2, false>(char const*)", 0, 1});
  KernelSummary s = classify_kernels(t, fp::testing::llama_signatures());
  ASSERT_EQ(s.families.count(kOtherFusedFamily), 1u);
  EXPECT_EQ(s.families.at(kOtherFusedFamily).launches, 2);
}

}  // namespace
}  // namespace fp
