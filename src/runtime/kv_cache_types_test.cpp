#include "runtime/kv_cache_types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/text.h"

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

KvCacheTypes llama() {
  auto t = load_kv_cache_types("llama-server");
  EXPECT_TRUE(t) << t.error().message;
  return t ? *t : KvCacheTypes{};
}

TEST(KvCacheTypes, LlamaServerDataListsWhatItsHelpAccepts) {
  const KvCacheTypes t = llama();
  // `llama-server --help` of build 11669; tests/matrix/cpu_matrix.sh checks the installed one.
  EXPECT_THAT(t.types, ElementsAre("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"));
  EXPECT_EQ(t.default_type, "f16");
  EXPECT_EQ(t.k_flags.front(), "-ctk");
  EXPECT_EQ(t.v_flags.front(), "-ctv");
  ASSERT_FALSE(t.mixed_pairs.empty());
  EXPECT_EQ(t.mixed_pairs.front().label(), "q8_0/f16");
}

TEST(KvCacheTypes, PairsSameMixedAndWords) {
  const KvCacheTypes t = llama();
  auto p = parse_kv_pairs("q8_0, q8_0/f16,f16/q8_0,q8_0", t);
  ASSERT_TRUE(p) << p.error().message;
  std::vector<std::string> labels;
  for (const auto& x : *p) labels.push_back(x.label());
  EXPECT_THAT(labels, ElementsAre("q8_0", "q8_0/f16", "f16/q8_0"));  // the repeated q8_0 dropped
  auto same = parse_kv_pairs("same", t);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->size(), t.types.size());
  auto all = parse_kv_pairs("all", t);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), t.types.size() + t.mixed_pairs.size());
}

TEST(KvCacheTypes, ErrorsNameTheItemAndTheValidTypes) {
  const KvCacheTypes t = llama();
  auto bad = parse_kv_pairs("f16,q9_0", t);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("\"q9_0\" is not a KV cache type the runtime accepts"));
  EXPECT_THAT(bad.error().message, HasSubstr("q5_1"));
  EXPECT_THAT(bad.error().message, HasSubstr("llama-server.json: kv_cache.types"));
  EXPECT_FALSE(parse_kv_pairs("q8_0/f16/f16", t));
  EXPECT_FALSE(parse_kv_pairs("f16,,q8_0", t));
  EXPECT_FALSE(parse_kv_pairs("", t));
}

TEST(KvCacheTypes, DataErrorsNameTheFileAndField) {
  auto none = parse_kv_cache_types("{\"adapter\": {}}", "x.json");
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("x.json: no \"kv_cache\" section"));
  auto bad_default = parse_kv_cache_types(
      R"({"kv_cache": {"k_flags": ["-ctk"], "v_flags": ["-ctv"], "types": ["f16"], "default": "q8_0"}})", "x.json");
  ASSERT_FALSE(bad_default);
  EXPECT_THAT(bad_default.error().message, HasSubstr("kv_cache.default"));
  auto bad_mix = parse_kv_cache_types(
      R"({"kv_cache": {"k_flags": ["-ctk"], "v_flags": ["-ctv"], "types": ["f16"], "default": "f16", "mixed_pairs": ["f16/q8_0"]}})",
      "x.json");
  ASSERT_FALSE(bad_mix);
  EXPECT_THAT(bad_mix.error().message, HasSubstr("kv_cache.mixed_pairs"));
}

TEST(KvCacheTypes, LaunchLineGetsThePairInsteadOfItsOwn) {
  const KvCacheTypes t = llama();
  const std::vector<std::string> argv = {"{runtime}", "-m", "{model}", "-ctk", "q4_0", "--cache-type-v=q5_1", "-fa", "{flag}"};
  EXPECT_THAT(with_kv_pair(argv, t, {"q8_0", "f16"}),
              ElementsAre("{runtime}", "-m", "{model}", "-fa", "{flag}", "-ctk", "q8_0", "-ctv", "f16"));
  EXPECT_THAT(with_kv_pair({"{runtime}"}, t, {"f16", "f16"}), ElementsAre("{runtime}", "-ctk", "f16", "-ctv", "f16"));
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

TEST(KvCacheTypes, EveryTypeHasItsBlockSize) {
  const KvCacheTypes t = llama();
  for (const auto& type : t.types) EXPECT_TRUE(t.block_bytes.count(type)) << type << " has no kv_cache.block_bytes entry";
  // ggml's type_traits: f16 2 bytes per element, q8_0 34 bytes per 32, q4_0 18 per 32.
  EXPECT_EQ(t.block_bytes.at("f16").bytes, 2);
  EXPECT_EQ(t.block_bytes.at("q8_0").elements, 32);
  EXPECT_EQ(t.block_bytes.at("q8_0").bytes, 34);
  EXPECT_EQ(t.block_bytes.at("q4_0").bytes, 18);
}

TEST(KvCacheTypes, BadBlockSizesNameTheTypeAndWhatIsValid) {
  auto unknown = parse_kv_cache_types(
      R"({"kv_cache": {"k_flags": ["-ctk"], "v_flags": ["-ctv"], "types": ["f16"], "default": "f16", "block_bytes": {"q9": [1, 2]}}})", "x.json");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, HasSubstr("x.json: field \"kv_cache.block_bytes\""));
  EXPECT_THAT(unknown.error().message, HasSubstr("\"q9\" is not one of"));
  auto zero = parse_kv_cache_types(
      R"({"kv_cache": {"k_flags": ["-ctk"], "v_flags": ["-ctv"], "types": ["f16"], "default": "f16", "block_bytes": {"f16": [0, 2]}}})", "x.json");
  ASSERT_FALSE(zero);
  EXPECT_THAT(zero.error().message, HasSubstr("expected [elements per block, bytes per block]"));
}

TEST(KvCacheTypes, PairOfALaunchLineIsItsLastFlagsOrTheDefault) {
  const KvCacheTypes t = llama();
  EXPECT_EQ(kv_pair_of({"{runtime}", "-m", "{model}"}, t).label(), "f16");
  EXPECT_EQ(kv_pair_of({"{runtime}", "-ctk", "q8_0", "-ctv", "q4_0"}, t).label(), "q8_0/q4_0");
  EXPECT_EQ(kv_pair_of({"{runtime}", "--cache-type-k=q4_0", "-ctk", "q5_1"}, t).label(), "q5_1/f16");
  EXPECT_EQ(kv_pair_of({"{runtime}", "-ctv"}, t).label(), "f16");  // a flag without a value changes nothing
}

}  // namespace
}  // namespace fp
