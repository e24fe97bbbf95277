#include "measure/kv_headroom.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

const KvTypeCost kF16{"f16", 1, 2}, kQ8{"q8_0", 32, 34}, kQ4{"q4_0", 32, 18};

TEST(KvHeadroom, BytesPerTokenIsLayersTimesTheKAndVRows) {
  // The realistic model: 4 layers, 2 KV heads of 128: a K row of 256 f16 = 512 bytes, V the same.
  EXPECT_EQ(kv_bytes_per_token({4, 2, 128, 128}, kF16, kF16), 4u * (512 + 512));
  // q8_0 K: 256 / 32 blocks x 34 bytes = 272; q4_0 V: 8 x 18 = 144.
  EXPECT_EQ(kv_bytes_per_token({4, 2, 128, 128}, kQ8, kQ4), 4u * (272 + 144));
  // A row that is not whole blocks (head size 36 x 1 head) has no size: the runtime refuses it.
  EXPECT_EQ(kv_bytes_per_token({2, 1, 36, 36}, kQ8, kQ8), 0u);
}

TEST(KvHeadroom, TheCheckAgainstTheRuntimeAllowsItsTwoDecimalsOnly) {
  HeadroomInput in;
  in.shape = {4, 2, 128, 128};
  in.k = in.v = kF16;
  in.cells = 8192;
  in.runtime_kv_mib = 32.00;  // 4096 bytes x 8192 = 32 MiB
  auto out = compute_headroom(in);
  ASSERT_TRUE(out.headroom) << out.why_not;
  EXPECT_TRUE(out.headroom->kv_agrees);
  EXPECT_THAT(out.headroom->kv_check, HasSubstr("agrees with the runtime's own 32.00 MiB"));
  in.runtime_kv_mib = 32.02;
  out = compute_headroom(in);
  EXPECT_FALSE(out.headroom->kv_agrees);
  EXPECT_THAT(out.headroom->kv_check, HasSubstr("DIFFERS"));
}

TEST(KvHeadroom, MoreTokensComeFromTheDeviceThatRunsOutFirst) {
  HeadroomInput in;
  in.shape = {4, 2, 128, 128};  // 4096 bytes per token
  in.k = in.v = kF16;
  in.cells = 1000;
  in.free = {{"CPU", 4096ull * 5000 + 100, "host"}};
  auto one = compute_headroom(in);
  ASSERT_TRUE(one.headroom);
  EXPECT_EQ(one.headroom->more_tokens, 5000);
  EXPECT_EQ(one.headroom->context_fit, 6000);
  EXPECT_EQ(one.headroom->limited_by, "CPU");
  // Half the cache on each of two GPUs: each further token costs each GPU half its bytes; the GPU
  // with less free memory decides.
  in.kv_mib_by_device = {{"CUDA0", 10.0}, {"CUDA1", 10.0}};
  in.free = {{"CUDA0", 2048ull * 9000, "nvml 0"}, {"CUDA1", 2048ull * 7000, "nvml 1"}};
  auto two = compute_headroom(in);
  ASSERT_TRUE(two.headroom);
  EXPECT_EQ(two.headroom->more_tokens, 7000);
  EXPECT_EQ(two.headroom->limited_by, "CUDA1");
  // No free memory measured: the KV figures stand, the context that fits is unknown.
  in.free.clear();
  auto none = compute_headroom(in);
  ASSERT_TRUE(none.headroom);
  EXPECT_EQ(none.headroom->more_tokens, -1);
}

TEST(KvHeadroom, WhatIsMissingIsSaid) {
  HeadroomInput in;
  in.shape = {4, 2, 128, 128};
  in.k = kF16;
  in.v = {"q9", 1, 0};
  in.cells = 10;
  EXPECT_THAT(compute_headroom(in).why_not, HasSubstr("KV cache type q9 is not known"));
  in.v = kF16;
  in.cells = 0;
  EXPECT_THAT(compute_headroom(in).why_not, HasSubstr("KV cells"));
  in.shape.kv_heads = 0;
  EXPECT_THAT(compute_headroom(in).why_not, HasSubstr("attention shape"));
}

TEST(KvHeadroom, TokensInMib) {
  EXPECT_EQ(tokens_in_mib(68.0, 16384), 4352);
  EXPECT_EQ(tokens_in_mib(-1.0, 16384), 0);
  EXPECT_EQ(tokens_in_mib(1.0, 0), 0);
}

}  // namespace
}  // namespace fp
