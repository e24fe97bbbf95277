#include "support/support_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

AttentionShape shape(const std::string& name, int hk, int hv, int heads, int kv_heads, bool mla = false) {
  AttentionShape s;
  s.name = name;
  s.head_k = hk;
  s.head_v = hv;
  s.n_head = heads;
  s.n_head_kv = kv_heads;
  s.v_is_k_view = mla;
  s.scale = 0.125;
  return s;
}

TEST(SupportPlan, CrossesShapesPairsLengthsAndBatches) {
  const SupportPlan p = plan_support({shape("a", 128, 128, 32, 8), shape("b", 64, 64, 4, 4)},
                                     {{"f16", "f16"}, {"q8_0", "f16"}}, {4096, 8192}, {{1, 1}, {512, 1}}, "f16");
  ASSERT_EQ(p.queries.size(), 2u * 2 * 2 * 2);
  EXPECT_EQ(p.queries[0].shape, 0u);
  EXPECT_EQ(p.queries[1].batch.tokens, 512);
  EXPECT_EQ(p.queries[2].kv_length, 8192);
  EXPECT_EQ(p.queries[4].kv.label(), "q8_0/f16");
  EXPECT_EQ(p.queries[8].shape, 1u);
  EXPECT_TRUE(p.notes.empty());
}

TEST(SupportPlan, MlaAsksOneTypeAndF32ReachesTheNodeAsF16) {
  const SupportPlan p =
      plan_support({shape("ds", 576, 512, 128, 1, true)}, {{"f32", "f32"}, {"q8_0", "f16"}, {"q8_0", "q8_0"}}, {4096}, {{1, 1}}, "f16");
  ASSERT_EQ(p.queries.size(), 2u);  // q8_0/f16 became q8_0, asked once
  EXPECT_EQ(p.queries[0].kv.label(), "f32");
  EXPECT_EQ(p.queries[0].node.label(), "f16");
  EXPECT_EQ(p.queries[1].kv.label(), "q8_0");
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_THAT(p.notes[0], HasSubstr("ds: a K-only cache (MLA) has one type"));
}

TEST(SupportPlan, QueryLinesAreWhatTheHelperReads) {
  SupportPlan p = plan_support({shape("a", 128, 128, 32, 8)}, {{"q8_0", "q4_0"}}, {4096}, {{4, 4}}, "f16");
  const SupportPlan more = plan_support({shape("ds", 576, 512, 128, 1, true)}, {{"f16", "f16"}}, {256}, {{1, 1}}, "");
  append_plan(p, more);
  ASSERT_EQ(p.queries.size(), 2u);
  EXPECT_EQ(p.queries[1].shape, 1u);
  const std::string lines = query_lines(p);
  EXPECT_THAT(lines, HasSubstr("\n0 128 128 32 8 4096 4 4 q8_0 q4_0 0 0.125 0 0\n"));
  EXPECT_THAT(lines, HasSubstr("\n1 576 512 128 1 256 1 1 f16 f16 1 0.125 0 0\n"));
  EXPECT_EQ(StepBatch({4, 4}).label(), "4 (4 streams)");
  EXPECT_EQ(StepBatch({512, 1}).label(), "512");
}

TEST(SupportPlan, AnswersParsedPerQueryAndDevice) {
  const std::string text =
      "ggml\t0.27.0\tunknown\n"
      "device\t0\tCPU\tCPU\tcpu\tAMD EPYC\n"
      "device\t1\tVulkan0\tVulkan\tgpu\tllvmpipe (LLVM 15.0.6, 256 bits)\n"
      "answer\t0\t0\tyes\n"
      "answer\t0\t1\tno\n"
      "cache\t0\t1\tno\n"
      "cache\t0\t0\tyes\n"
      "refused\t1\tK cache type q8_0 with block size 32 does not divide the head size 40\n"
      "answer\t2\t0\tyes\n"
      "done\t2\t123\n";
  auto a = parse_answers(text, 4, "answers");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->ggml_version, "0.27.0");
  ASSERT_EQ(a->devices.size(), 2u);
  EXPECT_EQ(a->devices[1].name, "Vulkan0");
  EXPECT_EQ(a->devices[1].description, "llvmpipe (LLVM 15.0.6, 256 bits)");
  EXPECT_EQ(a->answers[0][0], Answer::Yes);
  EXPECT_EQ(a->answers[0][1], Answer::No);
  EXPECT_FALSE(a->cache_fits[0][1]);
  EXPECT_TRUE(a->cache_fits[0][0]);
  EXPECT_TRUE(a->cache_fits[2][1]);  // not said: taken
  EXPECT_EQ(a->answers[1][0], Answer::Refused);
  EXPECT_EQ(a->answers[1][1], Answer::Refused);
  EXPECT_THAT(a->why[1], HasSubstr("does not divide the head size 40"));
  EXPECT_EQ(a->answers[2][1], Answer::Missing);  // the helper died before answering for device 1
  EXPECT_EQ(a->answers[3][0], Answer::Missing);
  EXPECT_EQ(a->queries_us, 123);

  auto bad = parse_answers("answer\t9\t0\tyes\n", 2, "answers");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("answers: line 1: unknown query id"));
  auto garbage = parse_answers("hello\n", 1, "answers");
  ASSERT_FALSE(garbage);
  EXPECT_THAT(garbage.error().message, HasSubstr("not a line of the ggml query helper"));
}

}  // namespace
}  // namespace fp
