#include "runtime/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

const Prompt kChat{"p", {{"system", "be brief"}, {"user", "hello world"}}};

TEST(Tokenizer, LlamaServerDataRendersChatTurnsThenTokenizesTheText) {
  auto a = load_adapter("llama-server");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->tokenizer.has_value());
  const TokenizerEndpoint& e = *a->tokenizer;
  EXPECT_EQ(e.path, "/tokenize");
  EXPECT_EQ(e.template_path, "/apply-template");
  EXPECT_EQ(tokenize_text_body(e, "hello"), json::parse(R"({"content": "hello", "add_special": true})"));
  // Build 11669's answer: {"tokens": [ids]}; its length is the count.
  auto n = count_in_answer(e, json::parse(R"({"tokens": [1, 466, 441, 438]})"), "u");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 4);
  EXPECT_EQ(a->exact_output, json::parse(R"({"ignore_eos": true})"));
  ASSERT_TRUE(a->decode_probe.has_value());  // its note is not sent
  EXPECT_EQ(*a->decode_probe, json::parse(R"({"cache_prompt": true})"));
  EXPECT_EQ(token_count_method(*a, true), "llama-server POST /tokenize (chat turns rendered by POST /apply-template)");
}

TEST(Tokenizer, VllmDataSendsChatTurnsAndReadsTheCount) {
  auto a = load_adapter("vllm");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->tokenizer.has_value());
  const TokenizerEndpoint& e = *a->tokenizer;
  EXPECT_EQ(tokenize_chat_body(e, kChat), json::parse(R"({"messages": [{"role": "system", "content": "be brief"},
      {"role": "user", "content": "hello world"}], "add_generation_prompt": true})"));
  EXPECT_EQ(tokenize_text_body(e, "x"), json::parse(R"({"prompt": "x", "add_special_tokens": true})"));
  auto n = count_in_answer(e, json::parse(R"({"count": 17, "max_model_len": 4096, "tokens": [1]})"), "u");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 17);
}

TEST(Tokenizer, AnAnswerWithoutTheCountIsAnErrorNamingTheField) {
  TokenizerEndpoint e;
  e.count_field = "tokens";
  auto n = count_in_answer(e, json::parse(R"({"error": "not found"})"), "http://h/tokenize");
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.error().message, HasSubstr("POST http://h/tokenize: the answer has no field \"tokens\" (runtime data tokenizer.count)"));
  EXPECT_FALSE(count_in_answer(e, json::parse(R"({"tokens": "three"})"), "u").ok());
}

TEST(Tokenizer, WithoutAnEndpointTheCountIsAStatedEstimate) {
  auto a = load_adapter("openai-compatible");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_FALSE(a->tokenizer.has_value());
  EXPECT_TRUE(a->exact_output.empty());
  EXPECT_FALSE(a->decode_probe.has_value());  // a cache no request can ask for: no decode probes
  EXPECT_EQ(estimate_prompt_tokens(kChat), 5);  // 19 characters / 4, rounded up
  EXPECT_THAT(token_count_method(*a, true), HasSubstr("estimated at 4 characters per token: the runtime data of openai-compatible names no tokenizer endpoint"));
}

}  // namespace
}  // namespace fp
