#include "model/model_recipe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace fp
