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
  w.add_tensor("t", {3}, WeightType::F32, std::string(12, '\1'));
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

TEST(ModelRecipe, StreamedBytesDoNotDependOnThreads) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/tiny.json");
  ASSERT_TRUE(r.ok());
  for (WeightType t : {WeightType::F16, WeightType::Q8_0, WeightType::Q4_0}) {
    const GgufWriter plan = llama_gguf_plan(recipe_with_weight_type(*r, t));
    std::string one, many;
    plan.write([&](std::string_view b) { one.append(b); return true; }, 1);
    plan.write([&](std::string_view b) { many.append(b); return true; }, 7);
    EXPECT_EQ(one, many) << weight_encoding(t).name;
    EXPECT_EQ(one.size(), plan.file_size());
  }
}

TEST(ModelRecipe, StreamingStopsWhenTheSinkFails) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/realistic.json");
  ASSERT_TRUE(r.ok());
  size_t calls = 0;
  EXPECT_FALSE(llama_gguf_plan(*r).write([&](std::string_view) { return ++calls < 3; }, 4));
  EXPECT_EQ(calls, 3u);
}

TEST(ModelRecipe, QuantizedWeightsKeepTheValuesAndTheShape) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/tiny.json");
  ASSERT_TRUE(r.ok());
  const ModelRecipe q = recipe_with_weight_type(*r, WeightType::Q4_0);
  EXPECT_EQ(q.name, "tiny-q4_0");
  EXPECT_EQ(q.output, "fixtures/models/generated/tiny-q4_0.gguf");
  EXPECT_TRUE(q.sha256.empty());
  const std::string f16 = build_llama_gguf(*r), q4 = build_llama_gguf(q);
  EXPECT_LT(q4.size(), f16.size() * 2 / 3);
  auto meta = parse_gguf_metadata(q4, "q4");
  ASSERT_TRUE(meta.ok()) << meta.error().message;
  EXPECT_EQ(meta->integer("general.file_type"), 2);  // mostly Q4_0
  EXPECT_EQ(meta->integer("llama.embedding_length"), 128);
  // q4_K needs rows of 256: the tiny model's 128-wide rows fall back to q8_0.
  EXPECT_EQ(matrix_weight_type(recipe_with_weight_type(*r, WeightType::Q4_K), 128), WeightType::Q8_0);
  EXPECT_EQ(matrix_weight_type(recipe_with_weight_type(*r, WeightType::Q4_K), 256), WeightType::Q4_K);
  EXPECT_EQ(matrix_weight_type(recipe_with_weight_type(*r, WeightType::Q4_0), 48), WeightType::F16);
}

TEST(ModelRecipe, DeployedShapesLoadAndSayWhatTheyCopy) {
  const char* dir = FLASHPROOF_SOURCE_DIR "/fixtures/models/shapes/";
  struct Want { const char* name; uint32_t head, n_head, n_head_kv; };
  for (const Want& w : {Want{"llama-3.2-1b", 64, 32, 8}, Want{"llama-3.2-3b", 128, 24, 8}, Want{"llama-3.1-8b", 128, 32, 8},
                        Want{"qwen2.5-7b", 128, 28, 4}, Want{"phi-3-mini", 96, 32, 32}, Want{"gemma-2-9b-attn", 256, 16, 8},
                        Want{"mistral-nemo-12b", 128, 32, 8}, Want{"llama-3.1-70b-slice", 128, 64, 8},
                        Want{"llama-3.1-70b-q4_0", 128, 64, 8}}) {
    auto r = load_model_recipe(std::string(dir) + w.name + ".json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->head_size(), w.head) << w.name;
    EXPECT_EQ(r->n_head, w.n_head) << w.name;
    EXPECT_EQ(r->n_head_kv, w.n_head_kv) << w.name;
    EXPECT_NE(r->copies.find("config.json"), std::string::npos) << w.name;
    EXPECT_GE(r->n_vocab, 32000u) << w.name;
  }
}

TEST(ModelRecipe, HeadDimApartFromTheEmbedding) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/tiny.json");
  ASSERT_TRUE(r.ok());
  ModelRecipe nemo_like = *r;
  nemo_like.head_dim = 48;  // 4 heads x 48 = 192 != n_embd 128
  nemo_like.n_vocab = 1000;
  const std::string bytes = build_llama_gguf(nemo_like);
  auto meta = parse_gguf_metadata(bytes, "hd48");
  ASSERT_TRUE(meta.ok());
  auto facts = model_facts(*meta);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_EQ(facts->head_size_k, 48);
  EXPECT_EQ(facts->n_embd, 128);
  EXPECT_EQ(meta->integer("llama.vocab_size"), 1000);
  auto variant = recipe_with_head_size(nemo_like, 64);
  ASSERT_TRUE(variant.ok());
  EXPECT_EQ(variant->head_dim, 64u);
  EXPECT_EQ(variant->n_embd, 128u);  // the head size moves alone when the recipe names it
}

TEST(ModelRecipe, GgufNameApartFromTheRecipeName) {
  auto r = load_model_recipe(FLASHPROOF_SOURCE_DIR "/fixtures/models/shapes/phi-3-mini.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ModelRecipe small = *r;
  small.n_layer = 1, small.n_embd = 64, small.n_head = 1, small.n_head_kv = 1, small.n_ff = 64, small.n_vocab = 0;
  auto meta = parse_gguf_metadata(build_llama_gguf(small), "phi");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->text("general.name"), "flashproof-hd96-mini");  // never "phi-3": see model_recipe.h
  small.gguf_name.clear();
  meta = parse_gguf_metadata(build_llama_gguf(small), "phi");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->text("general.name"), "flashproof-phi-3-mini");
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
