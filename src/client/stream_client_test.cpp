#include "client/stream_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "client/stream_metrics.h"
#include "testing/loopback_server.h"
#include "testing/recorded_chat.h"

namespace fp {
namespace {

using testing::Framing;
using testing::LoopbackServer;
using testing::Script;
using testing::Step;

constexpr int kFirstTokenDelayMs = 150;
constexpr int kGapMs = 30;

// The recorded stream: role chunk at once, first content after kFirstTokenDelayMs, then one
// event per kGapMs; the final usage chunk arrives split in two and together with [DONE].
Script recorded_script() {
  auto ev = testing::recorded_chat_events();
  Script s;
  s.steps.push_back({0, ev[0] + "\n\n"});
  s.steps.push_back({kFirstTokenDelayMs, ev[1] + "\n\n"});
  for (size_t i = 2; i <= 5; ++i) s.steps.push_back({kGapMs, ev[i] + "\n\n"});
  const std::string last = ev[6] + "\n\n" + ev[7] + "\n\n";
  s.steps.push_back({kGapMs, last.substr(0, 40)});
  s.steps.push_back({5, last.substr(40)});
  return s;
}

StreamRequest request_to(const LoopbackServer& server) {
  StreamRequest req;
  req.url = server.url("/v1/chat/completions");
  req.body = R"({"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":8})";
  req.timeout_s = 10;
  req.stall_timeout_s = 5;
  return req;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(StreamRequest, ReplaysRecordedLlamaServerStream) {
  LoopbackServer server(recorded_script());
  auto r = stream_request(request_to(server));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->http_status, 200);
  EXPECT_TRUE(r->done);
  EXPECT_EQ(r->text, testing::kRecordedText);
  EXPECT_EQ(r->finish_reason, "length");
  EXPECT_EQ(r->prompt_tokens, 12);
  EXPECT_EQ(r->completion_tokens, 8);
  EXPECT_EQ(r->system_fingerprint, "b11669-Debian");
  EXPECT_FALSE(r->server.reported) << "no timing keys given: the runtime's own timings are not read";

  // The role-only chunk came at once; TTFT waits for the first content.
  EXPECT_GE(r->ttft_s, kFirstTokenDelayMs / 1000.0);
  EXPECT_LT(r->ttft_s, 1.0);
  ASSERT_EQ(r->content_event_times_s.size(), 5u);
  EXPECT_DOUBLE_EQ(r->content_event_times_s.front(), r->ttft_s);
  for (double gap : inter_event_gaps_s(*r)) EXPECT_GE(gap, (kGapMs - 2) / 1000.0);
  EXPECT_GE(r->e2e_s, r->content_event_times_s.back() + (kGapMs + 5 - 2) / 1000.0);
  auto tpot = tpot_s(*r);
  ASSERT_TRUE(tpot);
  EXPECT_DOUBLE_EQ(*tpot, (r->e2e_s - r->ttft_s) / 7);

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_TRUE(contains(reqs[0], "POST /v1/chat/completions HTTP/1.1")) << reqs[0];
  EXPECT_TRUE(contains(reqs[0], "Content-Type: application/json")) << reqs[0];
  EXPECT_TRUE(contains(reqs[0], "\"stream\":true")) << reqs[0];
}

TEST(StreamRequest, HttpErrorQuotesServerMessage) {
  Script s;
  s.status = "500 Internal Server Error";
  s.content_type = "application/json";
  s.framing = Framing::kContentLength;
  s.steps = {{0, R"({"error":{"code":500,"message":"model is not loaded","type":"server_error"}})"}};
  LoopbackServer server(s);
  auto r = stream_request(request_to(server));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "POST " + server.url("/v1/chat/completions") + ": HTTP 500: \"model is not loaded\"; body: " +
                                   R"({"error":{"code":500,"message":"model is not loaded","type":"server_error"}})");
}

TEST(StreamRequest, StallIsAnErrorWithinTheStallTimeout) {
  Script s;
  s.steps = {{0, testing::recorded_chat_events()[0] + "\n\n"}};
  s.hold_ms = 10000;
  LoopbackServer server(s);
  StreamRequest req = request_to(server);
  req.stall_timeout_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  auto r = stream_request(req);
  double took = seconds_since(t0);
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "stalled: no byte for")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, server.url("/v1/chat/completions"))) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "1 events")) << r.error().message;
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 1.5);
}

TEST(StreamRequest, WholeRequestTimeout) {
  Script s;
  for (int i = 0; i < 40; ++i) s.steps.push_back({50, ": keep-alive\n\n"});  // bytes, never an answer
  LoopbackServer server(s);
  StreamRequest req = request_to(server);
  req.timeout_s = 0.4;
  auto t0 = std::chrono::steady_clock::now();
  auto r = stream_request(req);
  ASSERT_FALSE(r);
  EXPECT_LT(seconds_since(t0), 1.5);
  EXPECT_TRUE(contains(r.error().message, "timeout 0.4 s")) << r.error().message;
}

TEST(StreamRequest, StreamCutWithoutDone) {
  auto ev = testing::recorded_chat_events();
  Script s;
  s.framing = Framing::kCloseDelimited;
  s.steps = {{0, ev[0] + "\n\n" + ev[1] + "\n\n" + ev[2].substr(0, 30)}};
  LoopbackServer server(s);
  auto r = stream_request(request_to(server));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "POST " + server.url("/v1/chat/completions") +
                ": stream ended without data: [DONE] after 2 events and " +
                std::to_string(s.steps[0].bytes.size()) + " bytes, in the middle of an event");
}

TEST(StreamRequest, InvalidJsonEvent) {
  Script s;
  s.steps = {{0, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}\n\ndata: [DONE]\n\n"}};
  LoopbackServer server(s);
  auto r = stream_request(request_to(server));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "POST " + server.url("/v1/chat/completions") +
                                   ": invalid JSON in stream event \"{\\\"choices\\\":[{\\\"delta\\\":{\\\"content\\\":"
                                   "\\\"x\\\"}\"; expected a JSON object or [DONE]");
}

TEST(StreamRequest, LlamaServerErrorLineThenDone) {
  Script s;
  s.steps = {{0, "error: {\"code\":400,\"message\":\"the request exceeds the available context size\","
                 "\"type\":\"exceed_context_size_error\"}\n\ndata: [DONE]\n\n"}};
  LoopbackServer server(s);
  auto r = stream_request(request_to(server));
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message,
                       "server sent an error event: \"the request exceeds the available context size\""))
      << r.error().message;
}

TEST(StreamRequest, OversizeResponse) {
  Script s;
  auto ev = testing::recorded_chat_events();
  for (int i = 0; i < 200; ++i) s.steps.push_back({0, ev[1] + "\n\n"});
  s.steps.push_back({0, "data: [DONE]\n\n"});
  LoopbackServer server(s);
  StreamRequest req = request_to(server);
  req.max_bytes = 4096;
  auto r = stream_request(req);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "POST " + server.url("/v1/chat/completions") + ": response exceeds the limit of 4096 bytes (max_bytes)");
  req.max_bytes = 1 << 20;
  auto ok = stream_request(req);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->content_event_times_s.size(), 200u);
}

TEST(StreamRequest, ConnectionRefusedNamesUrl) {
  int port = 0;
  {
    LoopbackServer gone(Script{});
    port = gone.port();
  }
  StreamRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/completions";
  req.timeout_s = 2;
  auto r = stream_request(req);
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "POST " + req.url + ": ")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "onnect")) << r.error().message;  // curl: "Failed to connect ..."
}

TEST(StreamConcurrent, AtMostConcurrencyInFlightNextStartsAsOneFinishes) {
  LoopbackServer server(recorded_script());
  std::vector<StreamRequest> reqs(4, request_to(server));
  auto results = stream_concurrent(reqs, 2);
  ASSERT_EQ(results.size(), 4u);
  std::vector<double> offsets;
  for (auto& r : results) {
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->text, testing::kRecordedText);
    EXPECT_EQ(r->completion_tokens, 8);
    EXPECT_GE(r->ttft_s, kFirstTokenDelayMs / 1000.0);  // relative to its own send
    EXPECT_NEAR(r->queued_s, r->start_offset_s, 1e-9);  // all wanted at batch start
    offsets.push_back(r->start_offset_s);
  }
  EXPECT_EQ(server.max_concurrent(), 2);
  std::sort(offsets.begin(), offsets.end());
  const double one_request = (kFirstTokenDelayMs + 5 * kGapMs + 5) / 1000.0;
  EXPECT_LT(offsets[1], one_request / 2);  // two start at once
  EXPECT_GE(offsets[2], one_request);  // the others wait for a free slot
  EXPECT_LT(offsets[3], 2 * one_request);
  // Vector order is start order: the first two started first.
  EXPECT_LT(std::max(results[0]->start_offset_s, results[1]->start_offset_s),
            std::min(results[2]->start_offset_s, results[3]->start_offset_s));
}

TEST(StreamConcurrent, StartAtDelaysAndFailuresStayPerRequest) {
  LoopbackServer good(recorded_script());
  Script bad_script;
  bad_script.status = "503 Service Unavailable";
  bad_script.content_type = "application/json";
  bad_script.framing = Framing::kContentLength;
  bad_script.steps = {{0, R"({"error":{"code":503,"message":"Loading model"}})"}};
  LoopbackServer bad(bad_script);

  std::vector<StreamRequest> reqs = {request_to(good), request_to(bad), request_to(good)};
  reqs[0].start_at_s = 0.6;  // scheduled after request 2 ends (~0.3 s), though first in the vector
  auto results = stream_concurrent(reqs, 8);
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0]) << results[0].error().message;
  ASSERT_FALSE(results[1]);
  ASSERT_TRUE(results[2]) << results[2].error().message;
  EXPECT_TRUE(contains(results[1].error().message, "HTTP 503: \"Loading model\"")) << results[1].error().message;
  EXPECT_GE(results[0]->start_offset_s, 0.6);
  EXPECT_LT(results[0]->queued_s, 0.15);  // started when wanted: nothing was in its way
  EXPECT_LT(results[2]->start_offset_s, 0.15);
  EXPECT_EQ(good.max_concurrent(), 1);  // request 2 had finished before request 0 started
}

TEST(StreamBatch, AServerThatStopsAnsweringCostsOneStallTimeoutNotOnePerRequest) {
  Script s;
  s.steps = {{0, testing::recorded_chat_events()[0] + "\n\n"}};
  s.hold_ms = 10000;  // one event, then silence: a wedged server
  LoopbackServer server(s);
  std::vector<StreamRequest> reqs(8, request_to(server));
  for (auto& r : reqs) r.stall_timeout_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  BatchOutcome out = stream_batch(reqs, 2);
  const double took = seconds_since(t0);
  ASSERT_EQ(out.fates.size(), 8u);
  EXPECT_GE(out.count(RequestFate::stalled), 1u);
  EXPECT_EQ(out.count(RequestFate::stalled) + out.count(RequestFate::given_up), 2u);  // the two in flight
  EXPECT_EQ(out.count(RequestFate::not_sent), 6u);
  EXPECT_TRUE(contains(out.unanswered, "stalled: no byte for")) << out.unanswered;
  EXPECT_GE(out.unanswered_at_s, 0.3);
  EXPECT_LT(took, 1.2);  // one stall timeout, not four
  for (size_t i = 0; i < 8; ++i) EXPECT_FALSE(out.results[i]);
  EXPECT_TRUE(contains(out.results[7].error().message, "not sent: the server had stopped answering")) << out.results[7].error().message;
}

TEST(StreamBatch, AnUnreachableServerStopsTheBatchAtOnce) {
  int port = 0;
  {
    LoopbackServer gone(recorded_script());
    port = std::stoi(gone.url("").substr(gone.url("").rfind(':') + 1));
  }
  StreamRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions";
  req.timeout_s = 2;
  BatchOutcome out = stream_batch(std::vector<StreamRequest>(5, req), 1);
  EXPECT_EQ(out.count(RequestFate::unreachable), 1u);
  EXPECT_EQ(out.count(RequestFate::not_sent), 4u);
}

TEST(StreamBatch, NoRequestStartsAfterStartUntil) {
  LoopbackServer server(recorded_script());
  std::vector<StreamRequest> reqs(50, request_to(server));
  BatchOptions o;
  o.start_until_s = 0.25;
  auto t0 = std::chrono::steady_clock::now();
  BatchOutcome out = stream_batch(reqs, 1, o);
  const double took = seconds_since(t0);
  const double one_request = (kFirstTokenDelayMs + 5 * kGapMs + 5) / 1000.0;
  EXPECT_GE(out.count(RequestFate::answered), 1u);
  EXPECT_EQ(out.count(RequestFate::answered) + out.count(RequestFate::not_due), 50u);
  EXPECT_TRUE(out.unanswered.empty());
  EXPECT_LT(took, 0.25 + one_request + 0.5);
  for (size_t i = 0; i < reqs.size(); ++i)
    if (out.fates[i] == RequestFate::answered) EXPECT_LE(out.results[i]->start_offset_s, 0.25 + 0.05);
}

}  // namespace
}  // namespace fp
