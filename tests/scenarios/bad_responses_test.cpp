// Bad server responses not covered by stream_client_test.cpp: several events (of one stream,
// or split across a chunk boundary) in one chunk, a server that sends nothing at all (no headers,
// an empty body, or holds the connection), a non-streamed answer, an HTML error page, and bytes
// after [DONE].
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "client/stream_client.h"
#include "testing/loopback_server.h"
#include "testing/recorded_chat.h"

namespace fp {
namespace {

using testing::Framing;
using testing::LoopbackServer;
using testing::Script;

StreamRequest chat_request(const std::string& url) {
  StreamRequest req;
  req.url = url;
  req.body = R"({"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":8})";
  req.timeout_s = 10;
  req.stall_timeout_s = 1;
  return req;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A listening socket on 127.0.0.1 that never answers: the kernel completes the connection, the
// request is sent, and then nothing, not even a status line. With close_on_accept, the server
// accepts and closes at once (an empty reply).
class SilentServer {
 public:
  explicit SilentServer(bool close_on_accept) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("silent test server: cannot listen on 127.0.0.1");
    port_ = ntohs(addr.sin_port);
    if (close_on_accept) {
      closer_ = std::thread([this] {
        int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) ::close(c);
      });
    }
  }
  ~SilentServer() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes a blocked accept
    if (closer_.joinable()) closer_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/chat/completions"; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread closer_;
};

TEST(BadResponses, WholeStreamInOneChunk) {
  Script s;
  s.steps = {{0, testing::recorded_chat_stream()}};
  LoopbackServer server(s);
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->done);
  EXPECT_EQ(r->text, testing::kRecordedText);
  EXPECT_EQ(r->content_event_times_s.size(), 5u);
  EXPECT_EQ(r->completion_tokens, 8);
}

TEST(BadResponses, EventsInterleavedAcrossChunkBoundaries) {
  // Each chunk ends inside one event and starts the next: "...event 1 end\n\ndata: {event 2 st" | "art...".
  const std::string stream = testing::recorded_chat_stream();
  Script s;
  for (size_t at = 0; at < stream.size(); at += 37) s.steps.push_back({0, stream.substr(at, 37)});
  LoopbackServer server(s);
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->done);
  EXPECT_EQ(r->text, testing::kRecordedText);
  EXPECT_EQ(r->finish_reason, "length");
}

TEST(BadResponses, TwoDataLinesInOneEventAreOnePayload) {
  // Two chunks' JSON written as two data lines of one event (no blank line between): the payload is
  // the two joined by '\n', which is not one JSON object; it must be an error, never half a chunk.
  Script s;
  s.steps = {{0, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n"
                 "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DONE]\n\n"}};
  LoopbackServer server(s);
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "invalid JSON in stream event")) << r.error().message;
}

TEST(BadResponses, NoResponseAtAllIsAStall) {
  SilentServer server(/*close_on_accept=*/false);
  auto t0 = std::chrono::steady_clock::now();
  auto r = stream_request(chat_request(server.url()));
  ASSERT_FALSE(r);
  EXPECT_LT(seconds_since(t0), 5);  // the stall limit (1 s), not the whole timeout (10 s)
  EXPECT_TRUE(contains(r.error().message, "POST " + server.url())) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "stall")) << r.error().message;
}

TEST(BadResponses, ConnectionClosedWithoutAReply) {
  SilentServer server(/*close_on_accept=*/true);
  auto r = stream_request(chat_request(server.url()));
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "POST " + server.url() + ": ")) << r.error().message;
}

TEST(BadResponses, EmptyBodyIsNotAnAnswer) {
  Script s;
  s.framing = Framing::kCloseDelimited;
  LoopbackServer server(s);
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "without data: [DONE] after 0 events")) << r.error().message;
}

TEST(BadResponses, HeadersThenSilenceIsAStall) {
  Script s;
  s.hold_ms = 4000;
  LoopbackServer server(s);
  auto t0 = std::chrono::steady_clock::now();
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_FALSE(r);
  EXPECT_LT(seconds_since(t0), 3.5);
  EXPECT_TRUE(contains(r.error().message, "stall")) << r.error().message;
}

TEST(BadResponses, NonStreamedAnswerIsNotAStream) {
  Script s;
  s.content_type = "application/json";
  s.framing = Framing::kContentLength;
  s.steps = {{0, R"({"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]})"}};
  LoopbackServer server(s);
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "without data: [DONE]")) << r.error().message;
}

TEST(BadResponses, HtmlErrorPageIsQuoted) {
  Script s;
  s.status = "502 Bad Gateway";
  s.content_type = "text/html";
  s.framing = Framing::kContentLength;
  s.steps = {{0, "<html><body><h1>502 Bad Gateway</h1></body></html>"}};
  LoopbackServer server(s);
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "502")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "Bad Gateway")) << r.error().message;
}

TEST(BadResponses, BytesAfterDoneAreIgnored) {
  Script s;
  s.steps = {{0, testing::recorded_chat_stream() + "data: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n" +
                     "data: not json\n\n"}};
  LoopbackServer server(s);
  auto r = stream_request(chat_request(server.url("/v1/chat/completions")));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->text, testing::kRecordedText);
}

}  // namespace
}  // namespace fp
