#include "support/attention_shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "model/gguf_writer.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

const char* kConfigs = FLASHPROOF_SOURCE_DIR "/fixtures/models/public/configs.json";

TEST(AttentionShape, ShippedPublicConfigsHoldTheShapesTheIssueNames) {
  auto all = load_public_shapes(kConfigs);
  ASSERT_TRUE(all) << all.error().message;
  std::vector<std::string> names;
  for (const auto& s : *all) names.push_back(s.name);
  for (const char* want : {"Llama-3.2-1B", "Llama-3.2-3B", "Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Qwen2.5-7B-Instruct",
                           "Qwen2.5-32B-Instruct", "Qwen2.5-72B-Instruct", "Mistral-Nemo-12B", "Phi-3-mini-4k", "Gemma-2-9B",
                           "Gemma-2-27B", "Gemma-3-27B", "DeepSeek-V3"})
    EXPECT_THAT(names, ::testing::Contains(want));
  for (const auto& s : *all) {
    EXPECT_TRUE(check_shape(s)) << s.name;
    EXPECT_THAT(s.source, HasSubstr("config.json")) << s.name;  // each names the public config it copies
  }
  auto pick = select_shapes(*all, "DeepSeek-V3,Gemma-2-9B,Llama-3.1-70B", kConfigs);
  ASSERT_TRUE(pick) << pick.error().message;
  ASSERT_EQ(pick->size(), 3u);
  const AttentionShape& mla = (*pick)[0];
  EXPECT_TRUE(mla.v_is_k_view);
  EXPECT_EQ(mla.head_label(), "576/512 (MLA)");
  EXPECT_EQ(mla.heads_label(), "128/1");
  EXPECT_EQ((*pick)[1].logit_softcap, 50.0);
  EXPECT_EQ((*pick)[1].head_k, 256);
  EXPECT_EQ((*pick)[2].heads_label(), "64/8");
  EXPECT_NEAR((*pick)[2].scale, 1.0 / std::sqrt(128.0), 1e-12);  // no "scale": 1/sqrt(head_k)
}

TEST(AttentionShape, BadPublicConfigsNameFileEntryAndField) {
  auto unknown = select_shapes({}, "Llama-9", "x.json");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, HasSubstr("no config named \"Llama-9\" in x.json"));
  const std::string entry =
      R"("name": "M", "config": "org/m config.json", "architecture": "llama", "layers": 2, "n_embd": 64, "n_head": 6,
         "n_head_kv": 4, "head_k": 16, "head_v": 16, "n_ff": 128, "trained_context": 512, "kv_cache": "k_and_v")";
  auto bad_gqa = parse_public_shapes("{\"configs\": [{" + entry + "}]}", "x.json");
  ASSERT_FALSE(bad_gqa);
  EXPECT_THAT(bad_gqa.error().message, HasSubstr("6 heads are not a multiple of 4 KV heads"));
  auto bad_key = parse_public_shapes("{\"configs\": [{" + entry + ", \"heads\": 2}]}", "x.json");
  ASSERT_FALSE(bad_key);
  EXPECT_THAT(bad_key.error().message, HasSubstr("x.json"));
  EXPECT_THAT(bad_key.error().message, HasSubstr("configs[0].heads"));
  auto bad_cache = parse_public_shapes(R"({"configs": [{)" + entry.substr(0, entry.find("\"kv_cache\"")) + R"("kv_cache": "v_only"}]})",
                                       "x.json");
  ASSERT_FALSE(bad_cache);
  EXPECT_THAT(bad_cache.error().message, HasSubstr("configs[0].kv_cache"));
  EXPECT_FALSE(parse_public_shapes(R"({"configs": []})", "x.json"));
}

TEST(AttentionShape, GgufHeaderGivesMlaAsLlamaCppBuildsIt) {
  GgufWriter w;
  w.add_kv("general.architecture", std::string("deepseek2"));
  w.add_kv("deepseek2.block_count", uint32_t{61});
  w.add_kv("deepseek2.embedding_length", uint32_t{7168});
  w.add_kv("deepseek2.attention.head_count", uint32_t{128});
  w.add_kv("deepseek2.attention.head_count_kv", uint32_t{128});
  w.add_kv("deepseek2.attention.key_length", uint32_t{192});
  w.add_kv("deepseek2.attention.value_length", uint32_t{128});
  w.add_kv("deepseek2.attention.kv_lora_rank", uint32_t{512});
  w.add_kv("deepseek2.rope.dimension_count", uint32_t{64});
  w.add_kv("deepseek2.context_length", uint32_t{163840});
  auto meta = parse_gguf_metadata(w.serialize(), "ds.gguf");
  ASSERT_TRUE(meta) << meta.error().message;
  auto s = shape_of_gguf(*meta);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->head_k, 576);
  EXPECT_EQ(s->head_v, 512);
  EXPECT_EQ(s->n_head_kv, 1);
  EXPECT_TRUE(s->v_is_k_view);
  EXPECT_EQ(s->trained_context, 163840);
  EXPECT_EQ(s->name, "ds.gguf");
}

TEST(AttentionShape, GgufHeaderGivesGemmaSoftcapAndPlainLlama) {
  GgufWriter w;
  w.add_kv("general.architecture", std::string("gemma2"));
  w.add_kv("gemma2.block_count", uint32_t{42});
  w.add_kv("gemma2.embedding_length", uint32_t{3584});
  w.add_kv("gemma2.attention.head_count", uint32_t{16});
  w.add_kv("gemma2.attention.head_count_kv", uint32_t{8});
  w.add_kv("gemma2.attention.key_length", uint32_t{256});
  w.add_kv("gemma2.attention.value_length", uint32_t{256});
  w.add_kv("gemma2.attn_logit_softcapping", 50.0f);
  auto meta = parse_gguf_metadata(w.serialize(), "g.gguf");
  ASSERT_TRUE(meta);
  auto s = shape_of_gguf(*meta);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->logit_softcap, 50.0);
  EXPECT_EQ(s->head_label(), "256/256");
  EXPECT_FALSE(s->v_is_k_view);

  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/tiny.json");
  ASSERT_TRUE(r);
  const AttentionShape t = shape_of_recipe(*r);
  EXPECT_EQ(t.head_label(), "32/32");
  EXPECT_EQ(t.heads_label(), "4/2");
}

}  // namespace
}  // namespace fp
