// The timed pass's steps against a loopback double (testing/loopback_server.h): which requests run
// in which turn when the pass shares the machine with another (the side-by-side gate). The real
// llama-server serves the probes from its cache in tests/side_by_side (gate:decode-probes).
#include "flow/passes/timed_pass.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "case/suite.h"
#include "flow/passes/case_context.h"
#include "flow/passes/step_turns.h"
#include "testing/loopback_server.h"
#include "testing/recorded_chat.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using testing::LoopbackServer;
using testing::Script;

// Records, per step, how many of the server's requests were measured requests and how many decode
// probes (the llama-server data's decode_probe asks for the prompt cache).
class RecordingTurns : public StepTurns {
 public:
  explicit RecordingTurns(const LoopbackServer& server) : server_(server) {}
  double begin() override {
    at_begin_ = server_.requests().size();
    return 0;
  }
  void end() override {
    const auto reqs = server_.requests();
    Step s;
    for (size_t i = at_begin_; i < reqs.size(); ++i)
      (reqs[i].find("\"cache_prompt\":true") != std::string::npos ? s.probes : s.requests)++;
    steps.push_back(s);
  }
  void leave() override {}
  struct Step {
    int requests = 0, probes = 0;
  };
  std::vector<Step> steps;

 private:
  const LoopbackServer& server_;
  size_t at_begin_ = 0;
};

TEST(TimedPassTurns, EachDecodeProbeIsATurnOfItsOwnRightAfterItsRequest) {
  const fs::path dir = fs::temp_directory_path() / ("fp-timed-turns-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Script s;
  s.steps = {{0, testing::recorded_chat_stream()}};
  LoopbackServer server(s);
  const std::string path = (dir / "att.json").string();
  std::ofstream(path) << R"({"name": "att", "job": "chat", "runtime": "llama-server",
    "attach": {"endpoint": ")" << server.url("") << R"(", "model": "tiny"},
    "shape": {"prompt_set": "chat", "max_output_tokens": 4},
    "expect": {"fused_attention": true, "backend": "CPU"},
    "plan": {"warmup": 0, "repetitions": 2, "timeout_s": 10, "ready_timeout_s": 1}})";
  Suite suite;
  suite.root = dir.string();
  auto ctx = resolve_run_context(path, suite);
  ASSERT_TRUE(ctx) << ctx.error().message;
  ASSERT_TRUE(ctx->adapter.decode_probe) << "src/runtime/data/llama-server.json declares its prompt cache";
  RecordingTurns turns(server);
  TimedOptions o;
  o.turns = &turns;
  o.decode_probes = 3;
  auto pass = run_timed_pass(*ctx, case_placement(*ctx), o);
  fs::remove_all(dir);
  ASSERT_TRUE(pass) << pass.error().message;
  ASSERT_TRUE(pass->errors.empty()) << pass->errors.front();
  const size_t measured = pass->requests.size();
  ASSERT_GE(measured, 2u);
  EXPECT_EQ(pass->probes.size(), 3 * measured);
  // Each probe a turn of its own (the other pass's probes alternate with them one by one: four back
  // to back in one turn sample one moment of the machine, bench/README.md section 3), and the three
  // turns after a measured request's are its probes.
  int probe_steps = 0;
  for (size_t i = 0; i < turns.steps.size(); ++i) {
    const auto& st = turns.steps[i];
    if (st.probes == 0) continue;
    ++probe_steps;
    EXPECT_EQ(st.probes, 1) << "turn " << i;
    EXPECT_EQ(st.requests, 0) << "turn " << i << ": a probe shares its turn with nothing";
  }
  EXPECT_EQ(probe_steps, static_cast<int>(3 * measured));
  int requests_then_probes = 0;
  for (size_t i = 1; i + 3 < turns.steps.size(); ++i)
    if (turns.steps[i].requests == 1 && turns.steps[i].probes == 0 && turns.steps[i + 1].probes == 1 && turns.steps[i + 2].probes == 1 &&
        turns.steps[i + 3].probes == 1)
      ++requests_then_probes;
  EXPECT_EQ(requests_then_probes, static_cast<int>(measured));
}

}  // namespace
}  // namespace fp
