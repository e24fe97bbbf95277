#include "evidence/kernel_set.h"

#include <gtest/gtest.h>

#include "evidence/testing.h"

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

}  // namespace
}  // namespace fp
