#include "flow/passes/gated_figures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PairedRunner, TheCaseMayChooseItsGatedFiguresAndKernelFiguresNeedTheProbe) {
  Case c;
  c.job = Job::Chat;
  EXPECT_THAT(paired_gated_figures(c), ElementsAre("ttft_ms"));
  EXPECT_FALSE(needs_kernel_probe(paired_gated_figures(c)));
  c.plan.gated = {"ttft_ms", "gpu_kernel_ms_per_token"};
  EXPECT_THAT(paired_gated_figures(c), ElementsAre("ttft_ms", "gpu_kernel_ms_per_token"));
  EXPECT_TRUE(needs_kernel_probe(paired_gated_figures(c)));
  EXPECT_TRUE(needs_kernel_probe({"attention_kernel_ms_per_token"}));
  EXPECT_TRUE(needs_kernel_probe({"attention_kernel_ms"}));  // the name a case file had before issue 41
}

TEST(PairedRunner, OnCudaWithTheProbeKernelTimeIsGatedFirst) {
  Case c;
  c.job = Job::Completion;
  // A CPU case, or CUDA without the probe: the job's figures at the default minimum effect.
  auto cpu = gated_figures(c, false, false);
  EXPECT_THAT(cpu.figures, ElementsAre("ttft_ms", "itl_mean_ms"));
  EXPECT_DOUBLE_EQ(cpu.min_effect["ttft_ms"].relative, kDefaultMinEffect);
  EXPECT_DOUBLE_EQ(cpu.min_effect["ttft_ms"].floor, 1.0);  // every figure keeps its floor (case/effect_defaults.h)
  auto no_probe = gated_figures(c, true, false);
  EXPECT_THAT(no_probe.figures, ElementsAre("ttft_ms", "itl_mean_ms"));
  EXPECT_THAT(no_probe.note, HasSubstr("the kernel probe does not attach here"));
  // CUDA with the probe: kernel time per token first at 2% (the golden path's definition, issue 41
  // item 3), the host-clock figures at 25%.
  auto gpu = gated_figures(c, true, true);
  EXPECT_THAT(gpu.figures, ElementsAre("gpu_kernel_ms_per_token", "ttft_ms", "itl_mean_ms"));
  EXPECT_DOUBLE_EQ(gpu.min_effect["gpu_kernel_ms_per_token"].relative, 0.02);
  EXPECT_DOUBLE_EQ(gpu.min_effect["gpu_kernel_ms_per_token"].floor, 1e-6);
  EXPECT_THAT(gpu.note, HasSubstr("GPU kernel time per token first"));
  EXPECT_DOUBLE_EQ(gpu.min_effect["ttft_ms"].relative, 0.25);
  EXPECT_TRUE(needs_kernel_probe(gpu.figures));
  // The case's minimum effect wins over the machine's default; its own figures over the job's.
  c.plan.min_effect["ttft_ms"] = MinEffect{0.1, 2.0};
  EXPECT_DOUBLE_EQ(gated_figures(c, true, true).min_effect["ttft_ms"].relative, 0.1);
  EXPECT_DOUBLE_EQ(gated_figures(c, true, true).min_effect["ttft_ms"].floor, 2.0);
  c.plan.gated = {"ttft_ms"};
  auto named = gated_figures(c, true, true);
  EXPECT_THAT(named.figures, ElementsAre("ttft_ms"));
  EXPECT_DOUBLE_EQ(named.min_effect["ttft_ms"].relative, 0.1);
  EXPECT_EQ(named.note, "the case's plan.gated");
  // A job that gates on answers only gains no timing figure on a GPU.
  Case extraction;
  extraction.job = Job::Extraction;
  EXPECT_TRUE(gated_figures(extraction, true, true).figures.empty());
}

// Issue 41 item 4: on CUDA, the host-clock figures' minimum effect comes from the spread this machine
// recorded for the case (its golden), 3 launch sd within 5% .. 25%; none recorded: 25%.
TEST(PairedRunner, HostClockMinimumEffectOnCudaComesFromTheRecordedSpread) {
  Case c;
  c.job = Job::Chat;
  Golden steady;  // an H100 at the 8B shape: TTFT 52.8 ms, launch medians' MAD 0.25 ms (sd 0.7%)
  steady.figures["ttft_ms"] = GoldenFigure{52.8, 0.25, 5};
  auto g = gated_figures(c, true, true, &steady);
  EXPECT_DOUBLE_EQ(g.min_effect["ttft_ms"].relative, 0.05);  // 3 x 0.70% = 2.1%, raised to 5%
  EXPECT_DOUBLE_EQ(g.min_effect["ttft_ms"].floor, 1.0);
  EXPECT_THAT(g.note, HasSubstr("ttft_ms at 5.0%: 3 x its launch-to-launch sd 0.7% recorded on this machine (golden, 5 launches)"));
  Golden middling;  // sd 3%: 9%
  middling.figures["ttft_ms"] = GoldenFigure{100.0, 3.0 / 1.4826, 5};
  EXPECT_NEAR(gated_figures(c, true, true, &middling).min_effect["ttft_ms"].relative, 0.09, 1e-9);
  Golden bursty;  // sd 15%: capped at 25%
  bursty.figures["ttft_ms"] = GoldenFigure{100.0, 15.0 / 1.4826, 5};
  EXPECT_DOUBLE_EQ(gated_figures(c, true, true, &bursty).min_effect["ttft_ms"].relative, 0.25);
  Golden two_launches;  // too few launches to be a spread
  two_launches.figures["ttft_ms"] = GoldenFigure{52.8, 0.25, 2};
  auto none = gated_figures(c, true, true, &two_launches);
  EXPECT_DOUBLE_EQ(none.min_effect["ttft_ms"].relative, 0.25);
  EXPECT_THAT(none.note, HasSubstr("no golden of this case on this machine records its spread"));
  // The CPU path is untouched: the default minimum effect.
  EXPECT_DOUBLE_EQ(gated_figures(c, false, false, &steady).min_effect["ttft_ms"].relative, kDefaultMinEffect);
}

// itl_mean_ms (per launch, the median of each request's mean gap) reads its own recorded spread, never
// that of the golden path's itl_ms (every gap pooled: another unit, another spread).
TEST(PairedRunner, ItlMeanMsReadsItsOwnSpreadNotThePooledItlMs) {
  Case c;
  c.job = Job::Completion;
  Golden pooled_only;  // what goldens hold: itl_ms, steady (sd 0.7%), and no itl_mean_ms
  pooled_only.figures["ttft_ms"] = GoldenFigure{52.8, 0.25, 5};
  pooled_only.figures["itl_ms"] = GoldenFigure{6.0, 6.0 * 0.007 / 1.4826, 5};
  auto g = gated_figures(c, true, true, &pooled_only);
  EXPECT_DOUBLE_EQ(g.min_effect["itl_mean_ms"].relative, kHostClockOnGpuMinEffect);
  EXPECT_THAT(g.note, HasSubstr("itl_mean_ms at 25.0%: goldens record itl_ms, another definition, not its spread"));
  EXPECT_DOUBLE_EQ(g.min_effect["ttft_ms"].relative, 0.05);
  Golden own = pooled_only;  // where its own spread is recorded (sd 3%): 9%
  own.figures["itl_mean_ms"] = GoldenFigure{6.0, 6.0 * 0.03 / 1.4826, 5};
  EXPECT_NEAR(gated_figures(c, true, true, &own).min_effect["itl_mean_ms"].relative, 0.09, 1e-9);
}

// Guards: every figure a user feels that the job does not gate, at the case's guard effect; a
// figure the case un-guards (false) is left out, a gated figure is never also a guard.
TEST(PairedRunner, TheFiguresAUserFeelsThatTheJobDoesNotGateAreGuarded) {
  Case c;
  c.job = Job::Chat;
  auto g = gated_figures(c, false, false);
  EXPECT_THAT(g.figures, ElementsAre("ttft_ms"));
  EXPECT_EQ(g.guards.count("ttft_ms"), 0u);
  ASSERT_EQ(g.guards.count("itl_mean_ms"), 1u);
  EXPECT_DOUBLE_EQ(g.guards["itl_mean_ms"].relative, 0.25);
  EXPECT_DOUBLE_EQ(g.guards["itl_mean_ms"].floor, 0.05);
  EXPECT_EQ(g.guards.count("tpot_ms"), 1u);
  EXPECT_EQ(g.guards.count("e2e_ms"), 1u);
  EXPECT_EQ(g.guards.count("throughput_tokens_per_s"), 1u);
  EXPECT_EQ(g.guards.count("server_prompt_ms"), 0u);  // not a figure a user feels: reported
  c.plan.guards["itl_ms"] = std::nullopt;             // its old name: a case written before itl_mean_ms had its own
  c.plan.guards["tpot_ms"] = MinEffect{0.1, 0};
  auto tuned = gated_figures(c, false, false);
  EXPECT_EQ(tuned.guards.count("itl_mean_ms"), 0u);
  EXPECT_DOUBLE_EQ(tuned.guards["tpot_ms"].relative, 0.1);
}

}  // namespace
}  // namespace fp
