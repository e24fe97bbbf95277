#include "client/http_client.h"
#include "testing/loopback_server.h"

#include <gtest/gtest.h>


namespace fp {
namespace {

using testing::Framing;
using testing::LoopbackServer;
using testing::Script;

Script json_answer(std::string status, std::string body) {
  Script s;
  s.status = std::move(status);
  s.content_type = "application/json";
  s.framing = Framing::kContentLength;
  s.steps = {{0, std::move(body)}};
  return s;
}

TEST(HttpClient, GetReturnsStatusAndBody) {
  LoopbackServer server(json_answer("200 OK", R"({"status":"ok"})"));
  auto r = http_get(server.url("/health"), 5);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"status":"ok"})");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].rfind("GET /health HTTP/1.1\r\n", 0), 0u) << server.requests()[0];
}

TEST(HttpClient, NonSuccessStatusIsAValue) {
  LoopbackServer server(json_answer("503 Service Unavailable", R"({"error":{"message":"Loading model"}})"));
  auto r = http_get(server.url("/health"), 5);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->body, R"({"error":{"message":"Loading model"}})");
}

TEST(HttpClient, PostJsonSendsBodyAndContentType) {
  LoopbackServer server(json_answer("200 OK", "{}"));
  const std::string body = R"({"prompt":")" + std::string(3000, 'p') + R"("})";  // > 1 KiB: no Expect wait
  auto r = http_post_json(server.url("/completion"), body, 5);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200);
  std::string req = server.requests().at(0);
  EXPECT_EQ(req.rfind("POST /completion HTTP/1.1\r\n", 0), 0u) << req;
  EXPECT_NE(req.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_EQ(req.find("Expect:"), std::string::npos);
  EXPECT_EQ(req.substr(req.size() - body.size()), body);
}

TEST(HttpClient, BodyOverLimitIsAnError) {
  LoopbackServer server(json_answer("200 OK", std::string(5000, 'x')));
  auto r = http_get(server.url("/big"), 5, 1000);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "GET " + server.url("/big") + ": response body exceeds the limit of 1000 bytes");
}

TEST(HttpClient, TimeoutNamesUrlAndLimit) {
  Script s = json_answer("200 OK", "{}");
  s.steps[0].delay_ms = 3000;
  LoopbackServer server(s);
  auto r = http_get(server.url("/slow"), 0.2);
  ASSERT_FALSE(r);
  const std::string& m = r.error().message;
  EXPECT_EQ(m.rfind("GET " + server.url("/slow") + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("timed out"), std::string::npos) << m;
  EXPECT_NE(m.find("(timeout 0.2 s)"), std::string::npos) << m;
}

TEST(HttpClient, IgnoresProxyEnvironment) {
  LoopbackServer server(json_answer("200 OK", "direct"));
  setenv("http_proxy", "http://127.0.0.1:9", 1);  // nothing listens there
  setenv("HTTP_PROXY", "http://127.0.0.1:9", 1);
  auto r = http_get(server.url("/"), 5);
  unsetenv("http_proxy");
  unsetenv("HTTP_PROXY");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "direct");
}

}  // namespace
}  // namespace fp
