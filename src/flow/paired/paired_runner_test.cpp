#include "flow/paired/paired_runner.h"
#include "flow/passes/gpu_probe.h"
#include "flow/passes/low_noise_figures.h"
#include "flow/passes/probed_check.h"
#include "testing/recorded_runs.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>


namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TimedRequest request(const std::string& prompt, int round, double ttft_s, double cpu_s) {
  TimedRequest r;
  r.prompt_id = prompt;
  r.round = round;
  r.result.ttft_s = ttft_s;
  r.result.e2e_s = ttft_s + 0.1;
  r.result.content_event_times_s = {ttft_s, ttft_s + 0.01, ttft_s + 0.03};
  r.result.prompt_tokens = 90;
  r.result.completion_tokens = 10;
  r.result.server.prompt_ms = ttft_s * 900;
  r.result.server.decode_ms = 20.0;
  r.result.server.decode_tokens = 10;
  r.runtime_cpu_s = cpu_s;
  return r;
}

// The unit is one launch x one prompt: the median of that prompt's repetitions in the launch.
TEST(LaunchUnits, MedianOfEachPromptsRepetitions) {
  TimedPass p;
  p.ready_s = 1.5;
  p.cold_first.ttft_s = 0.4;
  p.requests = {request("a", 0, 0.10, 0.2), request("b", 0, 0.30, 0.4), request("a", 1, 0.12, 0.2),
                request("b", 1, 0.50, 0.4), request("a", 2, 0.50, 0.2), request("b", 2, 0.31, 0.4)};
  LaunchUnits u = launch_units(p);
  EXPECT_DOUBLE_EQ(u["ttft_ms"]["a"], 120);
  EXPECT_DOUBLE_EQ(u["ttft_ms"]["b"], 310);
  // itl_ms: one unit per launch, the median over the 6 requests of each one's mean gap (10 and 20 ms: 15).
  EXPECT_EQ(u["itl_mean_ms"].size(), 1u);
  EXPECT_NEAR(u["itl_mean_ms"][""], 15, 1e-9);
  EXPECT_DOUBLE_EQ(u["server_tpot_ms"]["a"], 2);
  EXPECT_DOUBLE_EQ(u["cpu_ms_per_token"]["b"], 4);  // 400 ms over 100 tokens
  EXPECT_DOUBLE_EQ(u["cold_ready_ms"][""], 1500);
  EXPECT_DOUBLE_EQ(u["cold_first_ttft_ms"][""], 400);
  EXPECT_EQ(u.count("throughput_tokens_per_s"), 0u);  // only for concurrent rounds
}

// One slow prompt among three (every gap of both its rounds 70% longer: the 1.65 -> 2.78 ms)
// moved the old unit (per-prompt medians, their mean per block) by about 19%; the median over the
// launch's requests does not move.
TEST(LaunchUnits, OneSlowPromptMovesTheDecodeUnitLittle) {
  TimedPass p;
  for (int round = 0; round < 2; ++round)
    for (const char* prompt : {"a", "b", "c"}) {
      TimedRequest r = request(prompt, round, 0.1, 0.2);
      const double gap = std::string(prompt) == "c" ? 2.78e-3 : 1.65e-3;
      r.result.content_event_times_s.clear();
      for (int t = 0; t < 32; ++t) r.result.content_event_times_s.push_back(0.1 + t * gap);
      p.requests.push_back(r);
    }
  LaunchUnits u = launch_units(p);
  ASSERT_EQ(u["itl_mean_ms"].size(), 1u);
  EXPECT_NEAR(u["itl_mean_ms"][""], 1.65, 1e-9);
  // The old unit (kept in gate.json): one value per prompt, c's 68% slower; against a launch where
  // every prompt ran at 1.65 ms its block value (the mean log-ratio over prompts) is +19%.
  const auto old = itl_per_prompt_ms(p);
  ASSERT_EQ(old.size(), 3u);
  EXPECT_NEAR(old.at("c"), 2.78, 1e-9);
  double block = 0;
  for (const auto& [prompt, v] : old) block += std::log(v / 1.65) / 3;
  EXPECT_NEAR(std::expm1(block), 0.19, 0.01);
}

// A decode slowdown that comes as stalls (measured under a 5% CPU quota: llama-server's own decode
// time per token +10%, the median token gap +1.2%): every tenth gap 1.7 ms longer. The median of the
// launch's gaps (the unit before) does not see it; each request's mean gap does, and so does itl_ms.
TEST(LaunchUnits, StallsMoveTheDecodeUnitAsTheyMoveDecodeTime) {
  auto launch = [](double stall_s) {
    TimedPass p;
    for (int round = 0; round < 2; ++round)
      for (const char* prompt : {"a", "b", "c"}) {
        TimedRequest r = request(prompt, round, 0.1, 0.2);
        r.result.content_event_times_s = {0.1};
        for (int gap = 1; gap <= 31; ++gap)
          r.result.content_event_times_s.push_back(r.result.content_event_times_s.back() + 1.65e-3 + (gap % 10 == 0 ? stall_s : 0));
        p.requests.push_back(r);
      }
    return p;
  };
  const TimedPass steady = launch(0), stalled = launch(1.7e-3);
  const double ratio = launch_units(stalled)["itl_mean_ms"][""] / launch_units(steady)["itl_mean_ms"][""];
  EXPECT_NEAR(ratio, 1 + 3 * 1.7 / (31 * 1.65), 1e-9);  // +9.97%, the decode time's own change
  ASSERT_TRUE(itl_gap_median_ms(stalled).has_value());
  EXPECT_NEAR(*itl_gap_median_ms(stalled), *itl_gap_median_ms(steady), 1e-9);  // blind
  EXPECT_FALSE(itl_gap_median_ms(TimedPass{}).has_value());
}

// With decode probes, itl_ms is the median of the probes' mean gaps alone; the full requests' unit
// stays beside it (itl_requests_ms) and nothing else moves: TTFT still comes from the full requests.
TEST(LaunchUnits, DecodeProbesCarryTheDecodeUnitAndTheFullRequestsEverythingElse) {
  auto timed = [](const std::string& prompt, double gap_s) {
    TimedRequest r = request(prompt, 0, 1.5, 1.6);
    r.result.content_event_times_s = {1.5};
    for (int gap = 1; gap <= 31; ++gap) r.result.content_event_times_s.push_back(1.5 + gap * gap_s);
    return r;
  };
  TimedPass p;
  for (const char* prompt : {"a", "b", "c"}) p.requests.push_back(timed(prompt, 2.0e-3));
  const double requests_only = launch_units(p)["itl_mean_ms"][""];
  EXPECT_NEAR(requests_only, 2.0, 1e-9);
  EXPECT_FALSE(launch_units(p).count("itl_requests_ms")) << "without probes itl_ms is the full requests' unit";
  EXPECT_FALSE(itl_requests_ms(TimedPass{}).has_value());
  // Four probes per request, one of them 40% slow: the median of the twelve keeps it out.
  for (const char* prompt : {"a", "b", "c"})
    for (int k = 0; k < 4; ++k) p.probes.push_back(timed(prompt, (k == 3 && prompt[0] == 'a' ? 3.1e-3 : 2.2e-3)));
  LaunchUnits u = launch_units(p);
  EXPECT_NEAR(u["itl_mean_ms"][""], 2.2, 1e-9);
  ASSERT_TRUE(itl_requests_ms(p).has_value());
  EXPECT_NEAR(*itl_requests_ms(p), 2.0, 1e-9);
  EXPECT_NEAR(u["itl_requests_ms"][""], 2.0, 1e-9) << "the full requests' decode, a figure of its own (the gate guards it)";
  EXPECT_NEAR(u["ttft_ms"]["a"], 1500, 1e-6);
  EXPECT_EQ(u["ttft_ms"].size(), 3u) << "the probes' TTFT (no prefill) is no unit";
}

TEST(PairedRunner, GatedFiguresAreTheJobsAndDirectionsFollowTheUnit) {
  EXPECT_THAT(paired_gated_figures(Job::Chat), ElementsAre("ttft_ms"));
  EXPECT_THAT(paired_gated_figures(Job::Completion), ElementsAre("ttft_ms", "itl_mean_ms"));
  EXPECT_THAT(paired_gated_figures(Job::Batch), ElementsAre("throughput_tokens_per_s"));
  EXPECT_TRUE(paired_gated_figures(Job::Extraction).empty());
  EXPECT_TRUE(higher_is_better("throughput_tokens_per_s"));
  EXPECT_FALSE(higher_is_better("ttft_ms"));
}

// A recorded H200 probed check (live-cuda-realistic-fa-on: the job's load, one request): the gate's
// kernel units are the golden path's figures of the same tally and tokens, per token, one per launch
// (issue 41 item 3: one definition in both modes).
TEST(PairedRunner, KernelUnitsArePerTokenOfTheProbedLoadAsTheGoldenPathHasThem) {
  auto tally = read_kernel_tally(testing::fixture("logs/h200-live/harness/live-cuda-realistic-fa-on.kernels-probed-check.tsv"));
  ASSERT_TRUE(tally.ok()) << tally.error().message;
  const KernelSummary k = classify_kernels(*tally, testing::llama_signatures());
  ASSERT_GT(k.fused_ns, 0);
  const long long tokens = 1000 + 4;  // about: the 1000-character prompt (shape.long_prompt) and 4 output tokens
  const KernelTimePerToken per_token = kernel_time_per_token(k, tokens);
  LaunchUnits u;
  add_kernel_units(u, per_token);
  EXPECT_DOUBLE_EQ(u["gpu_kernel_ms_per_token"][""], static_cast<double>(k.total_ns) * 1e-6 / tokens);
  EXPECT_DOUBLE_EQ(u["attention_kernel_ms_per_token"][""], static_cast<double>(k.fused_ns + k.unfused_ns) * 1e-6 / tokens);
  EXPECT_LT(u["attention_kernel_ms_per_token"][""], u["gpu_kernel_ms_per_token"][""]);
  EXPECT_EQ(u.size(), 2u) << "no per-launch kernel figure any more";
  // The golden path's figures of the same launch are the same numbers.
  const auto golden = kernel_figures({per_token.gpu_ms}, {per_token.attention_ms});
  ASSERT_EQ(golden.size(), 2u);
  EXPECT_EQ(golden[0].name, "gpu_kernel_ms_per_token");
  EXPECT_DOUBLE_EQ(golden[0].launch_medians.at(0), u["gpu_kernel_ms_per_token"][""]);
  EXPECT_EQ(golden[1].name, "attention_kernel_ms_per_token");
  EXPECT_DOUBLE_EQ(golden[1].launch_medians.at(0), u["attention_kernel_ms_per_token"][""]);
  LaunchUnits none;
  add_kernel_units(none, kernel_time_per_token(KernelSummary{}, tokens));  // no kernels: no figure, never a zero
  add_kernel_units(none, kernel_time_per_token(k, 0));                     // no tokens reported: none either
  EXPECT_TRUE(none.empty());
}

// On the CPU the gate's probed launch cannot run: a case that gates kernel time says why in the
// launch's errors (the gate then stops: "a launch failed"), it never crashes or gates a zero.
TEST(PairedRunner, WithoutTheProbeAKernelGateSaysWhy) {
  if (plan_gpu_probe("").attached) GTEST_SKIP() << "the kernel probe attaches here";
  CaseContext ctx;
  const GpuProbePlan probe = plan_gpu_probe("");
  LaunchPlacement at;
  at.out_dir = "/nonexistent";
  auto load = run_probed_load(ctx, at, probe);
  ASSERT_FALSE(load.ok());
  EXPECT_THAT(load.error().message, HasSubstr("the kernel probe is not attached: "));
  EXPECT_FALSE(probe.why_not.empty());
}

// Units pair only within a block, prompt by prompt; a failed launch leaves its block out.
TEST(PairedRunner, UnitsPairWithinABlockAndSkipFailedLaunches) {
  PairedOutcome o;
  o.arm_a = "baseline";
  o.arm_b = "candidate";
  auto launch = [](int block, const std::string& arm, double a, double b) {
    ArmLaunch l;
    l.block = block;
    l.arm = arm;
    l.units["ttft_ms"] = {{"p", a}, {"q", b}};
    return l;
  };
  o.launches = {launch(0, "baseline", 100, 200), launch(0, "candidate", 110, 220), launch(1, "candidate", 105, 210),
                launch(1, "baseline", 100, 200), launch(2, "baseline", 100, 200), launch(2, "candidate", 1, 1)};
  o.launches.back().errors.push_back("request failed");
  auto u = paired_units(o, "ttft_ms");
  ASSERT_EQ(u.size(), 4u);
  EXPECT_EQ(u[0].block, 0);
  EXPECT_TRUE(u[0].a_first);
  EXPECT_FALSE(u[2].a_first);  // block 1, no order recorded: B first (the fixed ABBA of older gate.json)
  EXPECT_DOUBLE_EQ(u[1].b, 220);
  EXPECT_TRUE(paired_units(o, "missing").empty());
  // The order each launch records wins over the fixed one.
  o.launches[0].first = false;
  o.launches[1].first = true;
  EXPECT_FALSE(paired_units(o, "ttft_ms")[0].a_first);
}

// The blocks' order: every pair once AB and once BA (balanced), the same for a seed, and no fixed
// period: the launches in the 2nd and 3rd place of each four belong to both arms, so a machine that
// swings with that period cannot line up with one arm for a whole run.
TEST(PairedRunner, BlockOrderIsBalancedPerPairAndHasNoFixedPeriod) {
  const auto order = block_orders(40, 7);
  ASSERT_EQ(order.size(), 40u);
  for (size_t k = 0; k + 1 < order.size(); k += 2) EXPECT_NE(order[k], order[k + 1]) << "pair at block " << k;
  EXPECT_EQ(order, block_orders(40, 7));
  EXPECT_NE(order, block_orders(40, 8));
  int pairs_ab_first = 0;
  for (size_t k = 0; k < order.size(); k += 2) pairs_ab_first += order[k] ? 1 : 0;
  EXPECT_GT(pairs_ab_first, 3);
  EXPECT_LT(pairs_ab_first, 17);
  // Launch positions 1 and 2 of each four (0-based): arm B's in ABBA; here arm A's about half the time.
  int a_in_middle = 0, middle = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto o = block_orders(6, seed);
    std::vector<char> launches;
    for (bool a_first : o) {
      launches.push_back(a_first ? 'A' : 'B');
      launches.push_back(a_first ? 'B' : 'A');
    }
    for (size_t i = 0; i < launches.size(); ++i)
      if (i % 4 == 1 || i % 4 == 2) {
        ++middle;
        a_in_middle += launches[i] == 'A' ? 1 : 0;
      }
  }
  EXPECT_GT(a_in_middle, middle / 3);
  EXPECT_LT(a_in_middle, 2 * middle / 3);
}

namespace {

// Blocks of two launches whose units of `figure` are `a` and `b` times a small per-block wobble.
PairedOutcome outcome_with(const std::string& figure, double a, double b, int blocks) {
  PairedOutcome o;
  o.arm_a = "baseline";
  o.arm_b = "candidate";
  for (int k = 0; k < blocks; ++k) {
    const double wobble = 1.0 + 0.002 * ((k * 7) % 5 - 2);
    for (const char* arm : {"baseline", "candidate"}) {
      ArmLaunch l;
      l.block = k;
      l.arm = arm;
      l.units[figure][""] = (std::string(arm) == "baseline" ? a : b * wobble);
      if (figure != "ttft_ms") l.units["ttft_ms"][""] = 100 * wobble;  // the gated figure: unchanged
      o.launches.push_back(l);
    }
  }
  return o;
}

}  // namespace

// A floor becomes a relative effect through the baseline's median: 0.4 ms on an 8 ms TTFT is +5%,
// beyond a bare 5% effect's half but far below its 1 ms floor (12.5%): no regression.
TEST(PairedRunner, AFloorTurnsIntoARelativeEffectThroughTheBaselinesMedian) {
  PairedOutcome o = outcome_with("ttft_ms", 8.0, 8.4, 8);
  for (auto& l : o.launches) l.units.erase("itl_mean_ms");
  EXPECT_DOUBLE_EQ(baseline_median(o, "ttft_ms"), 8.0);
  PairedPlan plan;
  plan.gated = {"ttft_ms"};
  plan.min_effect["ttft_ms"] = MinEffect{0.05, 1.0};
  decide_paired(o, plan, LookSchedule(4, 40));
  ASSERT_EQ(o.decisions.size(), 1u);
  EXPECT_DOUBLE_EQ(o.decisions[0].min_effect, 0.125);
  EXPECT_EQ(o.decisions[0].verdict, TimingVerdict::no_regression) << o.decisions[0].why;
  plan.min_effect["ttft_ms"] = MinEffect{0.05, 0};  // no floor: 5% on 8 ms is a regression
  decide_paired(o, plan, LookSchedule(4, 40));
  EXPECT_EQ(o.decisions[0].verdict, TimingVerdict::regression) << o.decisions[0].why;
}

// A halved decode speed on a chat case (TTFT gated, unchanged) is a regression through its guard.
TEST(PairedRunner, AGuardRegressionIsTheCasesRegression) {
  PairedOutcome o = outcome_with("tpot_ms", 5.0, 10.0, 8);
  PairedPlan plan;
  plan.gated = {"ttft_ms"};
  plan.guards["tpot_ms"] = MinEffect{0.25, 0.05};
  decide_paired(o, plan, LookSchedule(4, 40));
  ASSERT_EQ(o.decisions.size(), 1u);
  EXPECT_EQ(o.decisions[0].verdict, TimingVerdict::no_regression);
  ASSERT_EQ(o.guards.size(), 1u);
  EXPECT_EQ(o.guards[0].figure, "tpot_ms");
  EXPECT_EQ(o.guards[0].verdict, TimingVerdict::regression) << o.guards[0].why;
  EXPECT_TRUE(o.any_regression());
  EXPECT_FALSE(o.any_unresolved());
  for (const auto& r : o.reported) EXPECT_NE(r.figure, "tpot_ms");  // a guard is not also "reported"
  // +10% stays below the guard's 25%: the guard holds.
  PairedOutcome small = outcome_with("tpot_ms", 5.0, 5.5, 8);
  decide_paired(small, plan, LookSchedule(4, 40));
  EXPECT_NE(small.guards[0].verdict, TimingVerdict::regression);
  EXPECT_FALSE(small.any_regression());
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

TEST(EffectNote, SaysWhenTheFloorDecides) {
  // chat-tiny-short's TTFT of about 8 ms: 5% is 0.4 ms, the 1 ms floor decides (12.3%).
  EXPECT_EQ(effect_note(MinEffect{0.05, 1}, 8.13, "ttft_ms"), "floor 1 ms in force: 5% of the baseline's 8.13 ms is 0.407 ms");
  EXPECT_EQ(effect_note(MinEffect{0.05, 1}, 812, "ttft_ms"), "floor 1 ms, not in force at the baseline's 812 ms");
  EXPECT_EQ(effect_note(MinEffect{0.05, 0}, 8.13, "throughput_tokens_per_s"), "");
}

// Probes where itl_ms gates and the runtime serves a prompt from its cache; then the full requests'
// decode is guarded at itl_ms's own minimum effect (a slowdown under sustained load shows there more).
TEST(PairedRunner, DecodeProbesAndTheirGuardFollowTheGatedFiguresAndTheRuntime) {
  PairedPlan completion;
  completion.gated = {"ttft_ms", "itl_mean_ms"};
  completion.min_effect["itl_mean_ms"] = MinEffect{0.05, 0.02};
  PairedPlan p = completion;
  apply_decode_probes(p, true, -1);
  EXPECT_EQ(p.decode_probes, kDefaultDecodeProbes);
  ASSERT_TRUE(p.guards.count("itl_requests_ms"));
  EXPECT_DOUBLE_EQ(p.guards["itl_requests_ms"].relative, 0.05);
  EXPECT_DOUBLE_EQ(p.guards["itl_requests_ms"].floor, 0.02);
  p = completion;
  apply_decode_probes(p, true, 2);
  EXPECT_EQ(p.decode_probes, 2);
  p = completion;
  apply_decode_probes(p, true, 0);
  EXPECT_EQ(p.decode_probes, 0);
  EXPECT_FALSE(p.guards.count("itl_requests_ms")) << "no probes: itl_ms is the full requests' unit itself";
  p = completion;
  apply_decode_probes(p, false, 4);
  EXPECT_EQ(p.decode_probes, 0) << "a runtime without decode_probe gets none, whatever was asked";
  EXPECT_FALSE(p.guards.count("itl_requests_ms"));
  p = completion;
  p.concurrent_rounds = true;
  apply_decode_probes(p, true, 4);
  EXPECT_EQ(p.decode_probes, 0) << "a batch case's requests run all at once";
  PairedPlan chat;
  chat.gated = {"ttft_ms"};
  apply_decode_probes(chat, true, -1);
  EXPECT_EQ(chat.decode_probes, 0);
  EXPECT_TRUE(chat.guards.empty());
}

}  // namespace
}  // namespace fp
