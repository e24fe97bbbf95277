#include "model/model_recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "model/gguf_reader.h"
#include "model/gguf_writer.h"
#include "util/sha256.h"

namespace fp {
namespace {

TEST(ModelRecipe, SameRecipeSameBytesAndTheRecordedSha) {
  for (const char* name : {"tiny", "realistic"}) {
    auto r = load_model_recipe(std::string(FLASHPROOF_SOURCE_DIR "/fixtures/models/") + name + ".json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    const std::string a = build_llama_gguf(*r);
    EXPECT_EQ(a, build_llama_gguf(*r));
    EXPECT_EQ(sha256_hex(a), r->sha256) << name << ": the generator no longer reproduces the recorded model";
    EXPECT_EQ(a.substr(0, 4), "GGUF");
  }
}

TEST(ModelRecipe, RealisticShape) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/realistic.json");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->head_size(), 128u);
  EXPECT_LT(r->n_head_kv, r->n_head);  // grouped-query attention
  EXPECT_GE(r->n_ctx_train, 8192u);
  EXPECT_GE(r->n_layer, 4u);
}

TEST(ModelRecipe, SeedChangesTheWeights) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/tiny.json");
  ASSERT_TRUE(r.ok());
  ModelRecipe other = *r;
  other.seed += 1;
  EXPECT_NE(sha256_hex(build_llama_gguf(*r)), sha256_hex(build_llama_gguf(other)));
}

TEST(GgufWriter, HalfConversion) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);       // overflow to infinity
  EXPECT_EQ(float_to_half(5.960464e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(1.0009765625f), 0x3c01);
}

TEST(GgufWriter, HeaderAndAlignment) {
  GgufWriter w;
  w.add_kv("general.architecture", std::string("llama"));
  w.add_tensor("t", {3}, GgufType::F32, std::string(12, '\1'));
  const std::string b = w.serialize();
  uint32_t version;
  uint64_t tensors, kvs;
  std::memcpy(&version, b.data() + 4, 4);
  std::memcpy(&tensors, b.data() + 8, 8);
  std::memcpy(&kvs, b.data() + 16, 8);
  EXPECT_EQ(version, 3u);
  EXPECT_EQ(tensors, 1u);
  EXPECT_EQ(kvs, 1u);
  EXPECT_EQ(b.size() % 32, 0u);
  EXPECT_EQ(b.substr(b.size() - 32, 12), std::string(12, '\1'));
}

TEST(ModelRecipe, ValidationNamesTheField) {
  const std::string path = ::testing::TempDir() + "/bad-recipe.json";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(R"({"name":"x","seed":1,"n_embd":100,"n_head":3,"n_head_kv":1,"n_layer":1,"n_ff":8,"n_ctx_train":64,"output":"x.gguf"})", f);
  std::fclose(f);
  auto r = load_model_recipe(path);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("not a multiple of n_head"));
}

TEST(ModelRecipe, HeadSizeVariantKeepsSeedAndShape) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/realistic.json");
  ASSERT_TRUE(r.ok());
  auto v = recipe_with_head_size(*r, 48);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->head_size(), 48u);
  EXPECT_EQ(v->n_embd, 48u * r->n_head);
  EXPECT_EQ(v->seed, r->seed);
  EXPECT_EQ(v->n_head, r->n_head);
  EXPECT_EQ(v->n_head_kv, r->n_head_kv);
  EXPECT_EQ(v->n_layer, r->n_layer);
  EXPECT_EQ(v->n_ff, r->n_ff);
  EXPECT_EQ(v->name, "realistic-hd48");
  EXPECT_EQ(v->output, "fixtures/models/generated/matrix/realistic-hd48.gguf");
  // The GGUF says head size 48 and the same attention layers.
  auto facts = model_facts(*parse_gguf_metadata(build_llama_gguf(*v), "hd48"));
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_EQ(facts->head_size_k, 48);
  EXPECT_EQ(facts->layers, static_cast<int>(r->n_layer));
}

TEST(ModelRecipe, HeadSizesTheGeneratorCannotBuildAreNamed) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/tiny.json");
  ASSERT_TRUE(r.ok());
  for (uint32_t bad : {0u, 6u, 33u, 8192u}) {
    auto v = recipe_with_head_size(*r, bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_THAT(v.error().message, ::testing::HasSubstr("tiny.json: head size " + std::to_string(bad)));
  }
}

}  // namespace
}  // namespace fp
