#include "runtime/token_probabilities.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/adapter.h"
#include "testing/fixtures.h"
#include "util/text.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

TokenProbabilityKeys llama_keys() {
  auto a = load_adapter("llama-server");
  EXPECT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a && a->token_probabilities);
  return a && a->token_probabilities ? *a->token_probabilities : TokenProbabilityKeys{};
}

std::string recorded(const std::string& name) {
  auto text = read_file(testing::fixture("responses/answers-pass/" + name));
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : "";
}

// A real llama-server answer (build 11669, tiny model, /v1/chat/completions, not streamed, with
// logprobs and top_logprobs 4), read by llama-server's runtime data.
TEST(TokenProbabilities, ReadsARecordedLlamaServerAnswer) {
  const TokenProbabilityKeys k = llama_keys();
  auto a = read_token_probabilities(recorded("tiny-story-fa-on.json"), k.chat, k, "test");
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(a->tokens.size(), 72u);
  std::string joined;
  for (const auto& t : a->tokens) {
    joined += t.chosen.text;
    ASSERT_TRUE(t.chosen.id);
    ASSERT_EQ(t.candidates.size(), 4u);
    // Temperature 0: the chosen token is the first candidate, the most likely.
    EXPECT_EQ(*t.candidates[0].id, *t.chosen.id);
    EXPECT_DOUBLE_EQ(t.candidates[0].logprob, t.chosen.logprob);
    EXPECT_LE(t.candidates[1].logprob, t.chosen.logprob);
    EXPECT_LT(t.chosen.logprob, 0);
  }
  EXPECT_EQ(joined, a->text) << "the tokens spell the answer";
}

TEST(TokenProbabilities, AnAnswerWithoutProbabilitiesHasNoTokens) {
  const TokenProbabilityKeys k = llama_keys();
  auto a = read_token_probabilities(recorded("tiny-story-fa-on-no-logprobs.json"), k.chat, k, "test");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_FALSE(a->text.empty());
  EXPECT_TRUE(a->tokens.empty());
}

TEST(TokenProbabilities, ErrorsNameTheRequestTheFieldAndTheValue) {
  const TokenProbabilityKeys k = llama_keys();
  auto bad = read_token_probabilities(
      R"({"choices":[{"message":{"content":"x"},"logprobs":{"content":[{"id":1,"token":"x","logprob":"high"}]}}]})", k.chat, k, "prompt a");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("prompt a: /choices/0/logprobs/content/0.logprob: \"high\"; expected a number"));
  auto no_text = read_token_probabilities(R"({"choices":[]})", k.chat, k, "prompt a");
  ASSERT_FALSE(no_text);
  EXPECT_THAT(no_text.error().message, HasSubstr("no answer text at /choices/0/message/content"));
  EXPECT_FALSE(read_token_probabilities("not json", k.chat, k, "prompt a"));
}

TEST(TokenProbabilities, TheRuntimeDataIsChecked) {
  nlohmann::json adapter = {{"token_probabilities",
                             {{"chat", {{"request", {{"logprobs", true}}}, {"text", "choices/0"}, {"tokens", "/t"}}},
                              {"completion", {{"request", {{"logprobs", 2}}}, {"text", "/x"}, {"tokens", "/t"}}},
                              {"token", {{"text", "token"}, {"logprob", "logprob"}, {"candidates", "top"}}}}}};
  auto k = load_token_probability_keys(JsonFields(adapter, "rt.json", "adapter"));
  ASSERT_FALSE(k);
  EXPECT_THAT(k.error().message, HasSubstr("adapter.token_probabilities.chat.text"));
  EXPECT_THAT(k.error().message, HasSubstr("is not a JSON pointer"));
  adapter["token_probabilities"]["chat"]["text"] = "/choices/0";
  adapter["token_probabilities"]["token"]["probability"] = "p";
  k = load_token_probability_keys(JsonFields(adapter, "rt.json", "adapter"));
  ASSERT_FALSE(k);
  EXPECT_THAT(k.error().message, HasSubstr("probability"));
  adapter["token_probabilities"]["token"].erase("probability");
  EXPECT_TRUE(load_token_probability_keys(JsonFields(adapter, "rt.json", "adapter")));
}

}  // namespace
}  // namespace fp
