#include "flow/passes/instrument_retry.h"

#include <gtest/gtest.h>

#include <csignal>
#include <set>

#include "util/text.h"

namespace fp {
namespace {

const std::vector<std::string> kOrder = {"device_timings", "scheduler_debug", "verbose_logging"};

LaunchEnd broke(const std::string& words) {
  LaunchEnd e;
  e.broke = true;
  e.verb = "aborts";
  e.detail = "killed by signal 6 (Aborted), during the evidence requests";
  e.words = words;
  return e;
}

// A runtime that breaks while any instrument of `breakers` is on (every launch logged).
struct FakeRuntime {
  std::set<std::string> breakers;
  bool crashes_alone = false;
  std::vector<std::vector<std::string>> launched;  // the instruments off, per launch
  LaunchEnd operator()(const std::vector<std::string>& off) {
    launched.push_back(off);
    if (crashes_alone) return broke("segfault of its own");
    for (const auto& b : breakers)
      if (std::find(off.begin(), off.end(), b) == off.end()) return broke("under " + b);
    return LaunchEnd{};
  }
};

InstrumentSearch search(FakeRuntime& rt, const std::vector<std::string>& order = kOrder) {
  return search_breaking_instruments(order, broke("first"), std::ref(rt), [](const std::string& n) { return n; });
}

TEST(InstrumentRetry, TheFirstInstrumentCostsOneLaunch) {
  FakeRuntime rt{{"device_timings"}};
  const InstrumentSearch s = search(rt);
  EXPECT_EQ(s.extra_launches, 1);
  EXPECT_EQ(s.off, std::vector<std::string>{"device_timings"});
  EXPECT_FALSE(s.crashed_alone);
  ASSERT_TRUE(s.broke_with.count("device_timings"));
  EXPECT_EQ(s.broke_with.at("device_timings").words, "first");  // the launch with it on: the first
  EXPECT_EQ(s.steps, std::vector<std::string>{"launch 1 without device_timings: completed"});
}

// A later instrument: the ones taken off before it go back on in one more launch.
TEST(InstrumentRetry, ALaterInstrumentPutsTheEarlierOnesBack) {
  FakeRuntime rt{{"scheduler_debug"}};
  const InstrumentSearch s = search(rt);
  EXPECT_EQ(s.extra_launches, 3);
  EXPECT_EQ(rt.launched, (std::vector<std::vector<std::string>>{
                             {"device_timings"}, {"device_timings", "scheduler_debug"}, {"scheduler_debug"}}));
  EXPECT_EQ(s.off, std::vector<std::string>{"scheduler_debug"});
  EXPECT_EQ(s.broke_with.at("scheduler_debug").words, "under scheduler_debug");
  EXPECT_FALSE(s.broke_with.count("device_timings"));
  EXPECT_EQ(s.steps.back(), "launch 3 without scheduler_debug: completed");
}

// Two that break it each alone: the earlier one stays off too, with the words of the launch that
// broke when it came back.
TEST(InstrumentRetry, TwoBreakersStayOffBoth) {
  FakeRuntime rt{{"device_timings", "scheduler_debug"}};
  const InstrumentSearch s = search(rt);
  EXPECT_EQ(s.extra_launches, 3);
  EXPECT_EQ(s.off, (std::vector<std::string>{"device_timings", "scheduler_debug"}));
  EXPECT_EQ(s.broke_with.at("device_timings").words, "under device_timings");
  EXPECT_EQ(s.broke_with.at("scheduler_debug").words, "under scheduler_debug");
}

// A runtime that breaks with every instrument off crashed on its own: never a fallback.
TEST(InstrumentRetry, ACrashWithNoInstrumentIsItsOwn) {
  FakeRuntime rt;
  rt.crashes_alone = true;
  const InstrumentSearch s = search(rt);
  EXPECT_TRUE(s.crashed_alone);
  EXPECT_EQ(s.extra_launches, 3);  // one per instrument, the last with none on
  EXPECT_EQ(rt.launched.back(), kOrder);
  EXPECT_EQ(s.alone.words, "segfault of its own");
  EXPECT_TRUE(s.broke_with.empty());
  // No instrument at all: nothing to launch, the first launch was already without one.
  FakeRuntime none;
  const InstrumentSearch bare = search(none, {});
  EXPECT_TRUE(bare.crashed_alone);
  EXPECT_EQ(bare.extra_launches, 0);
  EXPECT_TRUE(none.launched.empty());
  EXPECT_EQ(bare.alone.words, "first");
}

TEST(InstrumentRetry, WhatBreaksARun) {
  ExitInfo aborted{true, -1, SIGABRT}, segv{true, -1, SIGSEGV}, status1{true, 1, 0}, running{};
  LaunchEnd a = classify_launch_failure(LaunchPhase::Requests, aborted, false, "e", "w");
  EXPECT_TRUE(a.broke);
  EXPECT_EQ(a.verb, "aborts");
  EXPECT_TRUE(a.detail.find("signal 6") != std::string::npos && a.detail.find("during the evidence requests") != std::string::npos)
      << a.detail;
  EXPECT_EQ(classify_launch_failure(LaunchPhase::Start, segv, false, "e", "w").verb, "crashes");
  const LaunchEnd exited = classify_launch_failure(LaunchPhase::Start, status1, false, "e", "w");
  EXPECT_TRUE(exited.broke);
  EXPECT_EQ(exited.detail, "exited with status 1, before it was ready");
  EXPECT_EQ(classify_launch_failure(LaunchPhase::Start, running, true, "e", "w").verb, "hangs");
  EXPECT_TRUE(classify_launch_failure(LaunchPhase::Requests, running, false, "HTTP 500", "w").broke);  // hung or refused
  // Alive, and the prompts could not be fitted: the prompt set's fault, the same in every launch.
  EXPECT_FALSE(classify_launch_failure(LaunchPhase::Prompts, running, false, "e", "w").broke);
  EXPECT_TRUE(classify_launch_failure(LaunchPhase::Prompts, aborted, false, "e", "w").broke);
  // The executable could not be started: the input's fault.
  EXPECT_FALSE(classify_launch_failure(LaunchPhase::Start, running, false, "not an executable", "").broke);
}

TEST(InstrumentRetry, TheLevelSaysWhyInTheRuntimesWords) {
  LaunchEnd e = broke("./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed");
  EXPECT_EQ(instrument_off_text("device timings", "GGML_VK_PERF_LOGGER=1", e),
            "device timings taken off: the runtime aborts with GGML_VK_PERF_LOGGER=1 on this case (killed by signal 6 (Aborted), "
            "during the evidence requests): ./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed");
}

}  // namespace
}  // namespace fp
