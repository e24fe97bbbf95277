#include "model/gguf_reader.h"

#include <gtest/gtest.h>

#include "model/gguf_writer.h"
#include "model/model_recipe.h"
#include "util/text.h"

namespace fp {
namespace {

std::string recipe_bytes(const std::string& name) {
  auto r = load_model_recipe(std::string(FLASHPROOF_SOURCE_DIR "/fixtures/models/") + name + ".json");
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? build_llama_gguf(*r) : std::string();
}

TEST(GgufReader, GeneratedModelsGiveTheirShape) {
  struct Want {
    const char* recipe;
    int layers, head_size, heads, kv_heads;
  };
  for (const Want& w : {Want{"tiny", 2, 32, 4, 2}, Want{"realistic", 4, 128, 4, 2}}) {
    auto meta = parse_gguf_metadata(recipe_bytes(w.recipe), w.recipe);
    ASSERT_TRUE(meta.ok()) << meta.error().message;
    EXPECT_EQ(meta->version, 3u);
    EXPECT_EQ(meta->text("general.architecture"), std::optional<std::string>("llama"));
    auto f = model_facts(*meta);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->layers, w.layers) << w.recipe;
    EXPECT_EQ(f->head_size_k, w.head_size) << w.recipe;
    EXPECT_EQ(f->head_size_v, w.head_size) << w.recipe;
    EXPECT_EQ(f->n_head, w.heads) << w.recipe;
    EXPECT_EQ(f->n_head_kv, w.kv_heads) << w.recipe;
  }
}

TEST(GgufReader, KeyLengthWinsOverEmbeddingOverHeads) {
  GgufWriter w;
  w.add_kv("general.architecture", std::string("qwen3"));
  w.add_kv("qwen3.block_count", uint32_t{28});
  w.add_kv("qwen3.embedding_length", uint32_t{1024});
  w.add_kv("qwen3.attention.head_count", uint32_t{16});
  w.add_kv("qwen3.attention.key_length", uint32_t{128});
  w.add_kv("qwen3.attention.value_length", uint32_t{128});
  auto f = model_facts(*parse_gguf_metadata(w.serialize(), "qwen3.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->layers, 28);
  EXPECT_EQ(f->head_size_k, 128);  // not 1024 / 16 = 64
  EXPECT_EQ(f->n_head_kv, 16);     // no head_count_kv: as many as heads
  EXPECT_EQ(f->longest_token_bytes, 0u);  // no vocabulary
}

TEST(GgufReader, LongestTokenOfTheVocabulary) {
  GgufWriter w;
  w.add_kv("general.architecture", std::string("llama"));
  w.add_kv("llama.block_count", uint32_t{2});
  w.add_kv("llama.embedding_length", uint32_t{128});
  w.add_kv("llama.attention.head_count", uint32_t{4});
  w.add_kv("tokenizer.ggml.tokens", std::vector<std::string>{"<s>", "\xE2\x96\x81the", std::string(40, ' '), "a"});
  auto f = model_facts(*parse_gguf_metadata(w.serialize(), "vocab.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->longest_token_bytes, 40u);
}

TEST(GgufReader, TruncatedFileIsAnErrorNamingTheByte) {
  const std::string bytes = recipe_bytes("tiny");
  for (size_t cut : {size_t{3}, size_t{10}, size_t{30}, size_t{200}, size_t{2000}}) {
    auto meta = parse_gguf_metadata(std::string_view(bytes).substr(0, cut), "cut.gguf");
    ASSERT_FALSE(meta.ok()) << "cut at " << cut;
    EXPECT_NE(meta.error().message.find("cut.gguf"), std::string::npos) << meta.error().message;
    if (cut >= 4) {
      EXPECT_NE(meta.error().message.find("truncated"), std::string::npos) << meta.error().message;
    }
  }
  const std::string path = ::testing::TempDir() + "fp_truncated.gguf";
  ASSERT_TRUE(write_file_atomic(path, bytes.substr(0, 500)).ok());
  auto cut_file = read_model_facts(path);
  ASSERT_FALSE(cut_file.ok());
  EXPECT_NE(cut_file.error().message.find(path + ": byte "), std::string::npos) << cut_file.error().message;
  EXPECT_NE(cut_file.error().message.find("truncated"), std::string::npos) << cut_file.error().message;
  ASSERT_TRUE(write_file_atomic(path, bytes).ok());
  auto whole = read_model_facts(path);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->layers, 2);
  auto f = read_model_facts("/nonexistent/model.gguf");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("/nonexistent/model.gguf"), std::string::npos);
}

TEST(GgufReader, NotGgufAndMissingKeysNamed) {
  auto bad = parse_gguf_metadata("PK\x03\x04 zip", "x.zip");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not a GGUF file"), std::string::npos);
  GgufWriter w;
  w.add_kv("general.architecture", std::string("llama"));
  auto f = model_facts(*parse_gguf_metadata(w.serialize(), "m.gguf"));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("\"llama.block_count\""), std::string::npos) << f.error().message;
}

}  // namespace
}  // namespace fp
