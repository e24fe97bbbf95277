#include "flow/passes/request_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/adapter.h"

namespace fp {
namespace {

using ::testing::ElementsAre;

CaseContext context(Job job) {
  CaseContext ctx;
  ctx.c.job = job;
  ctx.c.seed = 7;
  ctx.adapter.chat_path = "/v1/chat/completions";
  ctx.adapter.completion_path = "/v1/completions";
  ctx.adapter.request_extras = {{"cache_prompt", false}};
  ctx.served_model = "tiny.gguf";
  return ctx;
}

Prompt hello() { return Prompt{"hello", {{"system", "be brief"}, {"user", "hi"}}}; }

TEST(RequestBuilder, ChatCarriesTheModelTheTurnsAndTheRuntimesExtras) {
  CaseContext ctx = context(Job::Chat);
  StreamRequest r = build_request(ctx, "http://127.0.0.1:9", hello(), 8, 30);
  EXPECT_EQ(r.url, "http://127.0.0.1:9/v1/chat/completions");
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["model"], "tiny.gguf");
  EXPECT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["cache_prompt"], false);
  EXPECT_EQ(body["max_tokens"], 8);
  EXPECT_EQ(body["seed"], 7);
  EXPECT_TRUE(r.headers.empty());
}

TEST(RequestBuilder, CompletionSendsTextAndTheAttachedServersKeyAsAHeader) {
  CaseContext ctx = context(Job::Completion);
  ctx.request_headers = {"Authorization: Bearer k"};
  StreamRequest r = build_request(ctx, "https://gw/llama", hello(), 4, 30);
  EXPECT_EQ(r.url, "https://gw/llama/v1/completions");
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["prompt"], "be brief\n\nhi");
  EXPECT_EQ(body["model"], "tiny.gguf");
  EXPECT_EQ(r.body.find("Bearer"), std::string::npos) << "the key travels in a header, never in the body";
  EXPECT_THAT(r.headers, ElementsAre("Authorization: Bearer k"));
}

TEST(RequestBuilder, NoModelFieldWhenNoneIsKnown) {
  CaseContext ctx = context(Job::Chat);
  ctx.served_model.clear();
  EXPECT_FALSE(nlohmann::json::parse(build_request(ctx, "http://h", hello(), 4, 30).body).contains("model"));
}

TEST(RequestBuilder, ADecodeProbeIsTheSameRequestAskingForThePromptCache) {
  CaseContext ctx = context(Job::Completion);
  ctx.adapter.decode_probe = nlohmann::json{{"cache_prompt", true}};
  auto plain = nlohmann::json::parse(build_request(ctx, "http://h", hello(), 32, 30).body);
  auto probe = nlohmann::json::parse(build_decode_probe(ctx, "http://h", hello(), 32, 30).body);
  EXPECT_EQ(plain["cache_prompt"], false);
  EXPECT_EQ(probe["cache_prompt"], true);
  probe["cache_prompt"] = false;
  EXPECT_EQ(probe, plain) << "nothing else differs: same prompt, length, seed";
}

// Probabilities are asked for by the answers pass only: with llama-server's own data, a timed
// request carries none of its token_probabilities fields, and the answers request is the same
// request, not streamed, with the job's endpoint's fields.
TEST(RequestBuilder, OnlyTheAnswersRequestAsksForTokenProbabilities) {
  auto adapter = load_adapter("llama-server");
  ASSERT_TRUE(adapter) << adapter.error().message;
  ASSERT_TRUE(adapter->token_probabilities);
  for (Job job : {Job::Chat, Job::Completion}) {
    CaseContext ctx = context(job);
    ctx.adapter = *adapter;
    auto timed = nlohmann::json::parse(build_request(ctx, "http://h", hello(), 32, 30).body);
    auto probe = nlohmann::json::parse(build_decode_probe(ctx, "http://h", hello(), 32, 30).body);
    auto answers = nlohmann::json::parse(build_answers_request(ctx, "http://h", hello(), 32, 30).body);
    const auto& asked =
        job == Job::Completion ? adapter->token_probabilities->completion.request : adapter->token_probabilities->chat.request;
    for (const auto& [key, value] : asked.items()) {
      EXPECT_FALSE(timed.contains(key)) << key;
      EXPECT_FALSE(probe.contains(key)) << key;
      EXPECT_EQ(answers[key], value) << key;
    }
    EXPECT_EQ(timed["stream"], true);
    EXPECT_EQ(answers["stream"], false);
    EXPECT_FALSE(answers.contains("stream_options"));
    answers.erase("stream");
    timed.erase("stream");
    timed.erase("stream_options");
    for (const auto& [key, _] : asked.items()) answers.erase(key);
    EXPECT_EQ(answers, timed) << "otherwise the same request";
  }
}

}  // namespace
}  // namespace fp
