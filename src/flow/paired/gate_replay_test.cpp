#include "flow/paired/gate_replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "testing/fixtures.h"
#include "util/text.h"

namespace fp {
namespace {

nlohmann::json recorded(const std::string& name) {
  std::ifstream in(testing::fixture("logs/gate-machine-term/" + name));
  return nlohmann::json::parse(in);
}

nlohmann::json recorded_gz(const std::string& path) {
  auto text = read_file(testing::fixture(path));  // gunzips
  EXPECT_TRUE(text.ok()) << path;
  return text.ok() ? nlohmann::json::parse(*text) : nlohmann::json();
}

// Issue 41 item 3: gate.json recorded before the gate's kernel time was per token holds the per-launch
// total as gpu_kernel_ms; a replay reads it under the name of that definition, which says per launch
// (gpu_kernel_ms_per_launch), and decides as recorded: the H200's -ub 256 a regression of +56%, its
// identical builds none.
TEST(GateReplay, APerLaunchKernelTotalRecordedAsGpuKernelMsReadsUnderItsOwnName) {
  const std::string dir = "logs/h200-live/gate/round12-interleaved/";
  auto ub256 = replay_gate(recorded_gz(dir + "call2-gate-cuda-realistic-prefill-ub-256-1/gate.json.gz"));
  ASSERT_TRUE(ub256) << ub256.error().message;
  EXPECT_EQ(ub256->outcome, "regression");
  const auto kernel = std::find_if(ub256->decisions.begin(), ub256->decisions.end(),
                                   [](const FigureDecision& d) { return d.figure == "gpu_kernel_ms_per_launch"; });
  ASSERT_NE(kernel, ub256->decisions.end());
  EXPECT_EQ(kernel->verdict, TimingVerdict::regression);
  EXPECT_NEAR(kernel->estimate.worse_rel(), 0.56, 0.01);
  auto same = replay_gate(recorded_gz(dir + "call1-gate-cuda-realistic-prefill-same-1/gate.json.gz"));
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_NE(same->outcome, "regression");
  for (const auto& d : same->decisions) {
    EXPECT_NE(d.figure, "gpu_kernel_ms") << "no figure of that name: its two definitions have one name each";
    EXPECT_NE(d.verdict, TimingVerdict::regression) << decision_line(d);
  }
}

// The recorded identical-builds runs of cases/completion-realistic-long.json, one launch at a time on
// this VM while its cores drifted (fixtures/logs/gate-machine-term/README.md): none is a
// regression, and the replay looks only where the schedule does (4, 6, 8, 12, 16, 24, 32: trial 3's
// 34 blocks end between two looks).
TEST(GateReplay, NoRecordedIdenticalBuildsRunIsARegression) {
  for (const char* name : {"trial1-0755.json", "trial2-0814.json", "trial3-0823.json"}) {
    auto r = replay_gate(recorded(name));
    ASSERT_TRUE(r) << name;
    EXPECT_NE(r->outcome, "regression") << name;
    for (const auto& d : r->decisions) EXPECT_NE(d.verdict, TimingVerdict::regression) << name << ": " << decision_line(d);
    EXPECT_TRUE(LookSchedule(4, 40).is_look(r->blocks)) << name << ": " << r->blocks;
  }
  auto three = replay_gate(recorded("trial3-0823.json"));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->recorded_blocks, 34);
  EXPECT_LE(three->blocks, 32);
}

TEST(GateReplay, NotAGateJsonIsAnError) {
  auto r = replay_gate(nlohmann::json::parse(R"({"launches": 3})"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("\"launches\" and \"gated\""), std::string::npos);
  EXPECT_FALSE(replay_gate(nlohmann::json::parse(R"({"launches": [{"arm": "baseline"}], "gated": []})")));
}

// A run recorded before the gate guarded the full requests' decode: the probes' itl_ms and TTFT
// unchanged, the full requests' decode (the launch's itl_requests_ms field) 10% slower in the
// candidate. Replayed as recorded: "decided"; with the guard: "regression", from the same launches.
TEST(GateReplay, AnAddedGuardJudgesTheFullRequestsDecodeOfARecordedRun) {
  nlohmann::json j = {{"gated", {{{"figure", "ttft_ms"}, {"min_effect", 0.05}}, {{"figure", "itl_ms"}, {"min_effect", 0.05}}}},
                      {"launches", nlohmann::json::array()}};
  for (int b = 1; b <= 8; ++b)
    for (const char* arm : {"baseline", "candidate"}) {
      const double wobble = 1 + 0.004 * ((b * 7) % 5 - 2) + (arm[0] == 'c' ? 0.001 : 0);
      const double requests = 2.0 * wobble * (arm[0] == 'c' ? 1.10 : 1.0);
      j["launches"].push_back({{"block", b},
                               {"arm", arm},
                               {"first", (b % 2 == 1) == (arm[0] == 'b')},
                               {"units", {{"ttft_ms", {{"a", 2000 * wobble}}}, {"itl_ms", {{"", 2.2 * wobble}}}}},
                               {"itl_requests_ms", requests}});
    }
  auto as_recorded = replay_gate(j);
  ASSERT_TRUE(as_recorded) << as_recorded.error().message;
  EXPECT_EQ(as_recorded->outcome, "decided");
  EXPECT_TRUE(as_recorded->guards.empty());
  auto guarded = replay_gate(j, {{"itl_requests_ms", 0.05}});
  ASSERT_TRUE(guarded) << guarded.error().message;
  EXPECT_EQ(guarded->outcome, "regression");
  ASSERT_EQ(guarded->guards.size(), 1u);
  EXPECT_EQ(guarded->guards[0].figure, "itl_requests_ms");
  EXPECT_EQ(guarded->guards[0].verdict, TimingVerdict::regression) << decision_line(guarded->guards[0]);
  // A gate.json that recorded the guard is replayed with it, no option needed.
  j["guards"] = {{{"figure", "itl_requests_ms"}, {"min_effect", 0.05}}};
  auto recorded_guard = replay_gate(j);
  ASSERT_TRUE(recorded_guard);
  EXPECT_EQ(recorded_guard->outcome, "regression");
}

}  // namespace
}  // namespace fp
