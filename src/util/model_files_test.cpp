#include "testing/scratch_files.h"
#include "util/model_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>


namespace fp {
namespace {

using namespace testing;
using ::testing::HasSubstr;

TEST(ModelFiles, SplitNames) {
  EXPECT_EQ(split_name("/m/llama-70b-00002-of-00003.gguf").index, 2);
  EXPECT_EQ(split_name("/m/llama-70b-00002-of-00003.gguf").count, 3);
  EXPECT_EQ(split_name("m.gguf").count, 0);
  EXPECT_EQ(split_name("m-0001-of-0003.gguf").count, 0);    // llama.cpp writes five digits
  EXPECT_EQ(split_name("m-00004-of-00003.gguf").count, 0);  // not a shard of its own split
  EXPECT_EQ(split_name("m-00001-of-00003.bin").count, 0);
}

TEST(ModelFiles, OneFileIsItself) {
  auto f = model_files("/anywhere/m.gguf");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, std::vector<std::string>{"/anywhere/m.gguf"});
}

TEST(ModelFiles, EveryShardInOrder) {
  ScratchDir d;
  for (int i = 1; i <= 3; ++i) write_file(d.path("m-0000" + std::to_string(i) + "-of-00003.gguf"), "s");
  auto f = model_files(d.path("m-00001-of-00003.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(*f, (std::vector<std::string>{d.path("m-00001-of-00003.gguf"), d.path("m-00002-of-00003.gguf"),
                                          d.path("m-00003-of-00003.gguf")}));
  auto second = model_files(d.path("m-00002-of-00003.gguf"));
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message, HasSubstr("name its first shard, " + d.path("m-00001-of-00003.gguf")));
  fs::remove(d.path("m-00003-of-00003.gguf"));
  auto missing = model_files(d.path("m-00001-of-00003.gguf"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr(d.path("m-00003-of-00003.gguf") + ": shard 3 of 3"));
}

}  // namespace
}  // namespace fp
