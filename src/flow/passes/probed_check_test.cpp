#include "flow/passes/probed_check.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(ProbedCheck, NotRunWithoutTheProbeSaysWhy) {
  EvidenceOutcome ev;
  ev.probe.why_not = "no GPU: libnvidia-ml.so.1 not found";
  EXPECT_EQ(probed_check_blocker(ev), "no GPU: libnvidia-ml.so.1 not found");
  ProbedCheck pc;
  pc.why_not = probed_check_blocker(ev);
  EXPECT_EQ(probed_check_text(pc), "not run: no GPU: libnvidia-ml.so.1 not found");
}

TEST(ProbedCheck, NothingToTieToIsNamed) {
  EvidenceOutcome ev;
  ev.probe.attached = true;
  ev.probe.tally_path = "/r/kernels.tsv";
  EXPECT_EQ(probed_check_blocker(ev), "the evidence pass left no kernel tally (/r/kernels.tsv): nothing to tie to");
  ev.kernels = KernelSummary{};
  EXPECT_EQ(probed_check_blocker(ev), "the evidence pass's kernel tally has no records: nothing to tie to");
  ev.kernels->records = 3;
  EXPECT_EQ(probed_check_blocker(ev), "");
}

// Where level 3 came from the backend's own op timings (Vulkan's perf logger), the check runs with
// them; taken off (a known breakage, or the launch that broke), it does not, and says why.
TEST(ProbedCheck, DeviceTimingsStandInForTheProbe) {
  EvidenceOutcome ev;
  ev.probe.why_not = "no GPU: libnvidia-ml.so.1 not found";
  ev.log_path = "/r/evidence.log";
  ev.instruments_on.push_back(Instrument{"device_timings", {"kernels"}, {{"GGML_VK_PERF_LOGGER", "1"}}, {}, false});
  EXPECT_EQ(probed_check_blocker(ev), "the evidence pass left no kernel tally (/r/evidence.log (device timings)): nothing to tie to");
  ev.kernels = KernelSummary{};
  ev.kernels->records = 12;
  EXPECT_EQ(probed_check_blocker(ev), "");
  ev.instruments_on.clear();
  ev.instruments_off["device_timings"] = "known breakage vulkan_perf_logger_split_graph";
  EXPECT_EQ(probed_check_blocker(ev), "the evidence pass ran without device timings: known breakage vulkan_perf_logger_split_graph");
}

TEST(ProbedCheck, TextSaysIdenticalOrDiffers) {
  ProbedCheck pc;
  pc.ran = true;
  pc.check.records = 5;
  pc.check.fused = {"void flash_attn_ext_vec<128>(char const*)"};
  EXPECT_EQ(probed_check_text(pc), "attention kernels identical to the evidence pass (fused: flash_attn_ext_vec<128>; unfused: none)");
  pc.mismatches = {"fused attention kernels differ: only in the evidence pass: a", "unfused attention kernels differ: b"};
  EXPECT_EQ(probed_check_text(pc),
            "attention kernels DIFFER from the evidence pass: fused attention kernels differ: only in the evidence pass: a; "
            "unfused attention kernels differ: b");
}

TEST(ProbedCheck, LoadIsTheJobsConcurrency) {
  CaseContext ctx;
  ctx.prompts = {Prompt{"a", {}}, Prompt{"b", {}}, Prompt{"c", {}}, Prompt{"d", {}}};
  ctx.c.job = Job::Chat;
  LaunchPlacement at;
  EXPECT_EQ(job_load_streams(ctx, at), 1);
  EXPECT_EQ(job_load_text(ctx, at), "one request");
  ctx.c.job = Job::Batch;  // every prompt of a round in flight at once, as the timed rounds
  EXPECT_EQ(job_load_streams(ctx, at), 4);
  EXPECT_EQ(job_load_text(ctx, at), "4 requests at once (the batch job's round)");
  at.load_streams = 6;  // A/B's sustained phase
  EXPECT_EQ(job_load_streams(ctx, at), 6);
  EXPECT_EQ(job_load_text(ctx, at), "6 requests at once (the sustained phase's concurrency)");
  ProbedCheck pc;
  pc.ran = true;
  pc.check.records = 5;
  pc.load = job_load_text(ctx, at);
  EXPECT_EQ(probed_check_text(pc), "attention kernels identical to the evidence pass (fused: none; unfused: none); load: 6 requests "
                                   "at once (the sustained phase's concurrency)");
}

TEST(ProbedCheck, VariantsUnderLoadAreSaidNotFailed) {
  ProbedCheck pc;
  pc.ran = true;
  pc.check.records = 5;
  pc.load = "4 requests at once (the batch job's round)";
  pc.variants = {"fused attention kernels differ: only in the probed timed configuration: flash_attn_ext_vec<128, 2>"};
  EXPECT_EQ(probed_check_text(pc), "attention path identical to the evidence pass, kernel variants differ (fused attention kernels "
                                   "differ: only in the probed timed configuration: flash_attn_ext_vec<128, 2>); load: 4 requests at "
                                   "once (the batch job's round)");
}

TEST(ProbedCheck, EachProbedLaunchJoinsTheKernelSet) {
  std::vector<FamilySamples> samples;
  std::vector<std::string> launches;
  add_kernel_launch(samples, launches, {{"fattn-mma", true, 0.7, 10}, {"fattn-vec", true, 0.3, 20}}, "evidence pass");
  add_kernel_launch(samples, launches, {}, "probed check (no attention kernel)");
  add_kernel_launch(samples, launches, {{"fattn-mma", true, 0.72, 10}, {"fattn-vec", true, 0.28, 20}}, "probed check");
  EXPECT_EQ(launches, (std::vector<std::string>{"evidence pass", "probed check"}));
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].shares, (std::vector<double>{0.7, 0.72}));
}

}  // namespace
}  // namespace fp
