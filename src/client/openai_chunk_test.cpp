#include "client/openai_chunk.h"

#include <gtest/gtest.h>

#include <cmath>

#include "client/stream_metrics.h"
#include "util/utf8.h"

#include <nlohmann/json.hpp>

namespace fp {
namespace {

const ServerTimingKeys kNoTimings;

TEST(StreamChunk, RoleOnlyChunkIsNotContent) {
  StreamResult r;
  ASSERT_TRUE(apply_stream_chunk(
      R"({"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"system_fingerprint":"b11669-Debian"})",
      0.5, r, kNoTimings));
  EXPECT_EQ(r.ttft_s, -1);
  EXPECT_TRUE(r.content_event_times_s.empty());
  EXPECT_EQ(r.system_fingerprint, "b11669-Debian");
  ASSERT_TRUE(apply_stream_chunk(R"({"choices":[{"index":0,"delta":{"content":""}}]})", 0.6, r, kNoTimings));
  EXPECT_EQ(r.ttft_s, -1);  // empty content does not count either
  ASSERT_TRUE(apply_stream_chunk(R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})", 0.7, r, kNoTimings));
  EXPECT_DOUBLE_EQ(r.ttft_s, 0.7);
  EXPECT_EQ(r.text, "Hi");
}

namespace {
// llama-server's names for its timings and token counts, as src/runtime/data/llama-server.json
// gives them (the rates and the cache count left to each test).
ServerTimingKeys llama_server_keys() {
  ServerTimingKeys k;
  k.object = "timings";
  k.prompt_ms = "prompt_ms";
  k.prompt_tokens = "prompt_n";
  k.decode_ms = "predicted_ms";
  k.decode_tokens = "predicted_n";
  return k;
}
}  // namespace

TEST(StreamChunk, TimingsOfTheFirstTextAndOfTheWholeRequestWhereTheKeysSay) {
  // llama-server build 11669 with timings_per_token: every content event carries timings.
  StreamResult r;
  ServerTimingKeys keys = llama_server_keys();
  keys.cached_tokens = "cache_n";
  ASSERT_TRUE(apply_stream_chunk(
      R"({"choices":[{"index":0,"delta":{"content":" large"}}],"timings":{"cache_n":30,"prompt_n":59,"prompt_ms":12.5,"predicted_n":2,"predicted_ms":1.75}})",
      0.02, r, keys));
  ASSERT_TRUE(apply_stream_chunk(
      R"({"choices":[{"index":0,"delta":{"content":" x"}}],"timings":{"cache_n":30,"prompt_n":59,"prompt_ms":12.5,"predicted_n":3,"predicted_ms":2.5}})",
      0.03, r, keys));
  EXPECT_DOUBLE_EQ(r.at_first_text.decode_tokens, 2);
  EXPECT_DOUBLE_EQ(r.at_first_text.decode_ms, 1.75);
  EXPECT_DOUBLE_EQ(r.server.cached_tokens, 30);
  EXPECT_DOUBLE_EQ(r.server.prompt_tokens, 59);
  EXPECT_DOUBLE_EQ(r.server.decode_tokens, 3);
  // Another runtime's names, from its data file: the llama-server names are not read then.
  StreamResult o;
  ServerTimingKeys other;
  other.object = "metrics";
  other.prompt_ms = "prefill_ms";
  ASSERT_TRUE(apply_stream_chunk(
      R"({"choices":[{"index":0,"delta":{"content":"a"}}],"timings":{"prompt_ms":1},"metrics":{"prefill_ms":7}})", 0.1, o, other));
  EXPECT_DOUBLE_EQ(o.server.prompt_ms, 7);
  EXPECT_TRUE(std::isnan(o.server.cached_tokens));
}

TEST(StreamChunk, CompletionsTextAndVllmUsageChunk) {
  StreamResult r;
  ASSERT_TRUE(apply_stream_chunk(R"({"choices":[{"index":0,"text":"A","finish_reason":null}]})", 1.0, r, kNoTimings));
  ASSERT_TRUE(apply_stream_chunk(R"({"choices":[{"index":0,"text":null,"finish_reason":"stop"}]})", 1.5, r, kNoTimings));
  ASSERT_TRUE(apply_stream_chunk(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}})", 1.6, r, kNoTimings));
  ASSERT_TRUE(apply_stream_chunk(" [DONE] ", 1.7, r, kNoTimings));
  EXPECT_EQ(r.text, "A");
  EXPECT_EQ(r.finish_reason, "stop");
  EXPECT_EQ(r.prompt_tokens, 3);
  EXPECT_EQ(r.completion_tokens, 1);
  EXPECT_FALSE(r.server.reported);
  EXPECT_TRUE(r.done);
  EXPECT_DOUBLE_EQ(r.e2e_s, 1.7);
  ASSERT_TRUE(apply_stream_chunk("not json, ignored after [DONE]", 2.0, r, kNoTimings));
  EXPECT_DOUBLE_EQ(r.e2e_s, 1.7);
}

TEST(StreamChunk, InvalidJsonIsQuotedAndCut) {
  StreamResult r;
  std::string payload = R"({"choices":[{"delta":{"content":")" + std::string(300, 'x');
  Status st = apply_stream_chunk(payload, 0.1, r, kNoTimings);
  ASSERT_FALSE(st);
  const std::string& m = st.error().message;
  EXPECT_NE(m.find("invalid JSON in stream event \"{\\\"choices"), std::string::npos) << m;
  EXPECT_NE(m.find("...\""), std::string::npos) << m;
  EXPECT_LT(m.size(), 250u);
}

TEST(StreamChunk, ErrorObjectInStream) {
  StreamResult r;
  Status st = apply_stream_chunk(R"({"error":{"code":500,"message":"boom","type":"server_error"}})", 0.1, r, kNoTimings);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "server sent an error event: \"boom\"");
}

TEST(StreamChunk, ErrorMessageFromBody) {
  EXPECT_EQ(error_message_from_body(R"({"error":{"message":"no model"}})"), "\"no model\"");
  EXPECT_EQ(error_message_from_body(R"({"object":"error","message":"bad request","code":400})"), "\"bad request\"");
  EXPECT_EQ(error_message_from_body(R"({"error":"plain"})"), "\"plain\"");
  EXPECT_EQ(error_message_from_body("Internal Server Error"), "\"Internal Server Error\"");
}

// The runtime's own timings are read by the names its runtime data gives them, and only then.
TEST(StreamChunk, ServerTimingsReadByTheRuntimesNames) {
  const std::string chunk =
      R"({"choices":[],"timings":{"prompt_n":12,"prompt_ms":5.1,"prompt_per_second":2352.9,"predicted_n":8,"predicted_ms":40.2,"predicted_per_second":199.0}})";
  const ServerTimingKeys keys = llama_server_keys();  // no rate keys: they must not be read
  StreamResult r;
  ASSERT_TRUE(apply_stream_chunk(chunk, 1.0, r, keys));
  EXPECT_TRUE(r.server.reported);
  EXPECT_DOUBLE_EQ(r.server.prompt_ms, 5.1);
  EXPECT_DOUBLE_EQ(r.server.prompt_tokens, 12);
  EXPECT_DOUBLE_EQ(r.server.decode_ms, 40.2);
  EXPECT_DOUBLE_EQ(r.server.decode_tokens, 8);
  EXPECT_TRUE(std::isnan(r.server.decode_per_second)) << "a key the runtime data does not name is not read";
  StreamResult none;
  ASSERT_TRUE(apply_stream_chunk(chunk, 1.0, none, kNoTimings));
  EXPECT_FALSE(none.server.reported);
  EXPECT_TRUE(std::isnan(none.server.prompt_ms));
}

TEST(StreamMetrics, TpotFollowsVllmDefinition) {
  StreamResult r;
  r.ttft_s = 0.2;
  r.e2e_s = 1.6;
  r.completion_tokens = 8;
  auto t = tpot_s(r);
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(*t, 0.2);
  r.completion_tokens = 1;
  auto bad = tpot_s(r);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("completion_tokens >= 2, got 1"), std::string::npos);
  r.completion_tokens = 8;
  r.e2e_s = -1;
  EXPECT_FALSE(tpot_s(r));
}

TEST(StreamMetrics, GapsAreBetweenContentEvents) {
  StreamResult r;
  EXPECT_TRUE(inter_event_gaps_s(r).empty());
  r.content_event_times_s = {0.5, 0.75, 1.0, 1.5};
  EXPECT_EQ(inter_event_gaps_s(r), (std::vector<double>{0.25, 0.25, 0.5}));
}

TEST(HttpErrorText, ABodyThatIsNotUtf8BecomesTextAndIsNoted) {
  clear_not_utf8_noted();
  const std::string body = std::string("<html>\xFF\xFE") + std::string(400, '\xC3') + "</html>";
  const std::string text = http_error_text(500, body);
  EXPECT_EQ(invalid_utf8_at(text), std::string::npos) << text;
  EXPECT_NO_THROW((void)nlohmann::json(text).dump());
  EXPECT_NE(text.find("HTTP 500: \"<html>\\xff\\xfe"), std::string::npos) << text;  // quoted: the bytes as escapes
  EXPECT_NE(text.find("body: <html>\xEF\xBF\xBD"), std::string::npos) << text;      // shown: U+FFFD
  EXPECT_EQ(not_utf8_noted().at(kHttpBodies), 402u);
  clear_not_utf8_noted();
}

}  // namespace
}  // namespace fp
