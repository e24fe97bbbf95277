#include "support/support_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

SupportRules llama() {
  auto r = load_support_rules("llama-server");
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : SupportRules{};
}

TEST(SupportRules, LlamaServerData) {
  const SupportRules r = llama();
  EXPECT_EQ(r.library, "libggml.so");
  EXPECT_EQ(r.ubatch_default, 512);
  EXPECT_EQ(r.batch_default, 2048);
  EXPECT_EQ(r.f32_cast_to, "f16");
}

TEST(SupportRules, LaunchBatchFromTheLaunchLine) {
  const SupportRules r = llama();
  auto plain = launch_batch({"{runtime}", "-m", "{model}", "-c", "4096"}, r);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->ubatch, 512);
  EXPECT_EQ(plain->slots, 1);
  EXPECT_FALSE(plain->separate_streams);
  auto small_b = launch_batch({"-ub", "1024", "-b=256"}, r);
  ASSERT_TRUE(small_b);
  EXPECT_EQ(small_b->ubatch, 256);  // the physical batch is at most the logical one
  auto slots = launch_batch({"-np", "4"}, r);
  ASSERT_TRUE(slots);
  EXPECT_EQ(slots->slots, 4);
  EXPECT_TRUE(slots->separate_streams);  // an explicit -np gives each slot its own stream
  auto unified = launch_batch({"-np", "4", "-kvu"}, r);
  ASSERT_TRUE(unified);
  EXPECT_FALSE(unified->separate_streams);
  auto automatic = launch_batch({"--parallel", "-1"}, r);
  ASSERT_TRUE(automatic);
  EXPECT_EQ(automatic->slots, 1);
  auto bad = launch_batch({"-ub", "lots"}, r);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("-ub \"lots\": expected a whole number"));
}

TEST(SupportRules, MissingSectionAndUnknownKeysAreNamed) {
  auto none = parse_support_rules("{}", "x.json");
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("x.json: no \"support\" section"));
  auto extra = parse_support_rules(R"({"support": {"library": "libggml.so", "libary": 1}})", "x.json");
  ASSERT_FALSE(extra);
  EXPECT_THAT(extra.error().message, HasSubstr("support.libary"));
}

}  // namespace
}  // namespace fp
