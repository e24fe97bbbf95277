// Attached runs against a loopback double (testing/loopback_server.h) for what the real
// llama-server cannot answer (tests/newcase/newcase.sh runs the rest against it): a rate limit and
// a server that stays overloaded fail the run with the server's status and body, never a timing.
#include "flow/passes/attached_pass.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "flow/case_run/case_runner.h"
#include "testing/loopback_server.h"
#include "testing/recorded_chat.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using testing::Framing;
using testing::LoopbackServer;
using testing::Script;
using ::testing::AllOf;
using ::testing::HasSubstr;

class AttachedRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fp-attached-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CaseRun run(const std::string& endpoint, const std::string& plan = R"({"warmup": 0, "repetitions": 1, "timeout_s": 10, "ready_timeout_s": 1})") {
    const std::string path = (dir_ / "att.json").string();
    std::ofstream(path) << R"({"name": "att", "job": "chat", "runtime": "llama-server",
      "attach": {"endpoint": ")" << endpoint << R"(", "model": "tiny"},
      "shape": {"prompt_set": "chat", "max_output_tokens": 4},
      "expect": {"fused_attention": true, "backend": "CPU"}, "plan": )" << plan << "}";
    RunOptions o;
    o.results_root = (dir_ / "results").string();
    o.golden_root = (dir_ / "golden").string();
    o.record_missing_answers = true;
    o.quiet = true;
    return run_case_file(path, o);
  }
  std::string failures(const CaseRun& r) { return r.message + "\n" + join(r.result.failures, "\n"); }

  fs::path dir_;
};

Script json_answer(const std::string& status, const std::string& body) {
  Script s;
  s.status = status;
  s.content_type = "application/json";
  s.framing = Framing::kContentLength;
  s.steps = {{0, body}};
  return s;
}

TEST_F(AttachedRun, RateLimitFailsTheRunWithStatusAndBody) {
  LoopbackServer server(json_answer("429 Too Many Requests", R"({"error":{"message":"Too many requests","code":429}})"));
  CaseRun r = run(server.url(""));
  EXPECT_EQ(r.exit_code, kRunIncomplete);
  EXPECT_THAT(failures(r), AllOf(HasSubstr("GET " + server.url("/health")), HasSubstr("HTTP 429: \"Too many requests\"; body: {")));
  EXPECT_TRUE(r.result.figures.empty()) << "an error is never a timing";
}

TEST_F(AttachedRun, ServerThatStaysOverloadedFailsAfterTheReadyTimeout) {
  LoopbackServer server(json_answer("503 Service Unavailable", R"({"error":{"message":"Loading model","code":503}})"));
  CaseRun r = run(server.url(""));
  EXPECT_EQ(r.exit_code, kRunIncomplete);
  EXPECT_THAT(failures(r), AllOf(HasSubstr("not ready within 1 s"), HasSubstr("HTTP 503: \"Loading model\"")));
  EXPECT_GE(server.requests().size(), 2u) << "503 is waited out, until the ready timeout";
}

// A server that answers (the recorded llama-server stream) but whose log the case does not name:
// timings are measured, cold start is not, and every evidence level says why it is unavailable.
TEST_F(AttachedRun, WithoutALogTheVerdictIsNoEvidenceAndSaysWhy) {
  Script s;
  s.steps = {{0, testing::recorded_chat_stream()}};
  LoopbackServer server(s);
  CaseRun r = run(server.url(""));
  EXPECT_EQ(r.exit_code, kRunFail) << failures(r);
  EXPECT_EQ(to_string(r.result.verdict.activity), "no evidence");
  EXPECT_THAT(join(r.result.verdict.levels_unavailable, "\n"), HasSubstr("attached without a log"));
  EXPECT_EQ(r.result.attached, server.url(""));
  EXPECT_EQ(r.result.attached_log, "none");
  EXPECT_EQ(r.result.runtime_build, "11669") << "from the answer's system_fingerprint b11669-Debian";
  EXPECT_LT(r.result.cold_ready_ms, 0);
  EXPECT_FALSE(r.result.figures.empty());
  const auto reqs = server.requests();
  ASSERT_GE(reqs.size(), 3u);  // readiness, the evidence request, one timed request
  EXPECT_THAT(reqs[1], HasSubstr("\"model\":\"tiny\""));
}

}  // namespace
}  // namespace fp
