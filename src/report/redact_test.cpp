#include "report/redact.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;

TEST(Redact, OptionValuesThatAreSecrets) {
  EXPECT_THAT(redact_argv({"server", "--api-key", "sk-123", "--port", "8080", "--hf-token=abc", "-m", "model"}),
              ElementsAre("server", "--api-key", "***", "--port", "8080", "--hf-token=***", "-m", "model"));
}

TEST(Redact, EnvironmentVariables) {
  auto env = redact_env({{"HF_TOKEN", "x"}, {"OPENAI_API_KEY", "y"}, {"GGML_SCHED_DEBUG", "2"}});
  EXPECT_EQ(env["HF_TOKEN"], "***");
  EXPECT_EQ(env["OPENAI_API_KEY"], "***");
  EXPECT_EQ(env["GGML_SCHED_DEBUG"], "2");
}

TEST(Redact, OrdinaryWordsAreKept) {
  EXPECT_THAT(redact_argv({"--keep", "3", "--tokens", "5"}), ElementsAre("--keep", "3", "--tokens", "***"));
}

}  // namespace
}  // namespace fp
