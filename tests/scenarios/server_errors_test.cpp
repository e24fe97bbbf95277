// What llama-server cannot be made to answer, from a loopback double (testing/loopback_server.h): a
// rate limit (429), an overloaded server (503) and an unknown model (404) are reported with their
// status and body, never as a timing; long bodies are cut; the request's extra headers (an API key)
// reach the server. 401 and an unknown path are checked against the real llama-server
// (tests/newcase/newcase.sh attached).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/http_client.h"
#include "client/openai_chunk.h"
#include "client/stream_client.h"
#include "testing/loopback_server.h"

namespace fp {
namespace {

using testing::Framing;
using testing::LoopbackServer;
using testing::Script;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

Script answer(std::string status, std::string content_type, std::string body) {
  Script s;
  s.status = std::move(status);
  s.content_type = std::move(content_type);
  s.framing = Framing::kContentLength;
  s.steps = {{0, std::move(body)}};
  return s;
}

StreamRequest chat(const LoopbackServer& server) {
  StreamRequest r;
  r.url = server.url("/v1/chat/completions");
  r.body = R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})";
  r.timeout_s = 10;
  r.stall_timeout_s = 5;
  return r;
}

TEST(ServerErrors, RateLimitIsReportedWithStatusAndBody) {
  LoopbackServer server(answer("429 Too Many Requests", "application/json",
                               R"({"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}})"));
  auto r = stream_request(chat(server));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, AllOf(HasSubstr("POST " + server.url("/v1/chat/completions")), HasSubstr("HTTP 429: \"Rate limit reached for requests\""),
                                       HasSubstr("\"code\":\"rate_limit_exceeded\"")));
}

TEST(ServerErrors, OverloadedServerWithAnHtmlPageIsCutToOneLine) {
  std::string page = "<html>\n<head><title>503 Service Temporarily Unavailable</title></head>\n<body>";
  page += std::string(2000, 'x') + "</body></html>\n";
  LoopbackServer server(answer("503 Service Unavailable", "text/html", page));
  auto r = stream_request(chat(server));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_THAT(m, AllOf(HasSubstr("HTTP 503: "), HasSubstr("body: <html> <head><title>503 Service Temporarily Unavailable"),
                       HasSubstr("... (" + std::to_string(page.size()) + " bytes)"), Not(HasSubstr("</html>"))));
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_LT(m.size(), 800u) << "the body is cut, not quoted whole";
}

// llama-server answers whatever "model" a request names; vLLM and the OpenAI API refuse an unknown one.
TEST(ServerErrors, UnknownModelIsReportedWithTheServersWords) {
  LoopbackServer server(answer("404 Not Found", "application/json",
                               R"({"object":"error","message":"The model `llama-4` does not exist.","type":"NotFoundError","param":null,"code":404})"));
  auto r = stream_request(chat(server));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("HTTP 404: \"The model `llama-4` does not exist.\"; body: {\"object\":\"error\""));
}

TEST(ServerErrors, EmptyBodySaysSo) {
  EXPECT_EQ(http_error_text(502, ""), "HTTP 502 with an empty body");
}

TEST(ServerErrors, ExtraHeadersReachTheServer) {
  LoopbackServer server(answer("401 Unauthorized", "application/json", R"({"error":{"message":"Invalid API Key"}})"));
  StreamRequest r = chat(server);
  r.headers = {"Authorization: Bearer k-123"};
  auto out = stream_request(r);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.error().message, AllOf(HasSubstr("HTTP 401: \"Invalid API Key\""), Not(HasSubstr("k-123"))));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_THAT(server.requests()[0], HasSubstr("Authorization: Bearer k-123"));
  auto get = http_get(server.url("/v1/models"), 5, 1 << 20, {"Authorization: Bearer k-456"});
  ASSERT_TRUE(get.ok()) << get.error().message;
  EXPECT_EQ(get->status, 401);
  EXPECT_THAT(server.requests()[1], HasSubstr("Authorization: Bearer k-456"));
}

}  // namespace
}  // namespace fp
