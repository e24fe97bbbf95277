#include "evidence/verdict.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>

#include <algorithm>


namespace fp {
namespace {

using fp::testing::h200_verdict;
using fp::testing::llama_signatures;

bool has_quote(const Verdict& v, const std::string& text) {
  return std::find(v.quotes.begin(), v.quotes.end(), text) != v.quotes.end();
}
bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(Verdict, MidFaOnActiveOnCuda0AllThreeLevelsAgree) {
  Verdict v = h200_verdict("mid_fa_on", "CUDA0");
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2, 3}));
  EXPECT_TRUE(v.levels_unavailable.empty());
  EXPECT_FALSE(v.disagreement);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_FALSE(v.partial_offload);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CUDA0", 156}}));
  for (const auto& f : v.levels) EXPECT_EQ(f.active, std::optional<bool>(true)) << f.name;
  EXPECT_TRUE(has_quote(v, "llama_context: flash_attn    = enabled"));
  EXPECT_TRUE(has_quote(v, "flash_attn_ext_f16<128, 128, 16, 4, false, false>"));
  EXPECT_TRUE(contains(v.explanation, "156 of 156 FLASH_ATTN nodes on CUDA0")) << v.explanation;
  EXPECT_TRUE(contains(v.explanation, "fused attention is active on CUDA0")) << v.explanation;
}

TEST(Verdict, MidFaOnInfersCuda0FromKvCache) {
  Verdict v = h200_verdict("mid_fa_on", "");
  EXPECT_EQ(v.expected_backend, "CUDA0");
  EXPECT_EQ(v.expected_from, "KV cache device");
  EXPECT_EQ(v.activity, Activity::Active);
}

TEST(Verdict, MidFaOffNotActiveSoftMaxPath) {
  Verdict v = h200_verdict("mid_fa_off", "CUDA0");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2, 3}));
  EXPECT_FALSE(v.disagreement);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_TRUE(v.fused_backends.empty());
  EXPECT_TRUE(has_quote(v, "llama_context: flash_attn    = disabled"));
  EXPECT_TRUE(has_quote(v, "soft_max_f32<true, 0, 0, float>"));
  EXPECT_TRUE(contains(v.levels[1].summary, "no fused attention node; SOFT_MAX nodes: CUDA0 156")) << v.levels[1].summary;
  EXPECT_TRUE(contains(v.levels[2].summary, "360 unfused attention launches")) << v.levels[2].summary;
}

TEST(Verdict, MidFaAutoActiveResolutionQuoted) {
  Verdict v = h200_verdict("mid_fa_auto", "CUDA0");
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_FALSE(v.disagreement);
  EXPECT_TRUE(has_quote(v, "sched_reserve: Flash Attention was auto, set to enabled"));
  EXPECT_TRUE(contains(v.levels[0].summary, "resolved: \"sched_reserve: Flash Attention was auto, set to enabled\""))
      << v.levels[0].summary;
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CUDA0", 164}}));
}

TEST(Verdict, Q5_1SilentFallbackToCpu) {
  Verdict v = h200_verdict("mid_fa_on_q5_1", "CUDA0");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_TRUE(v.silent_fallback);
  EXPECT_TRUE(v.disagreement);
  EXPECT_FALSE(v.partial_offload);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CPU", 156}}));
  EXPECT_TRUE(has_quote(v, "sched_reserve: graph splits = 10"));
  EXPECT_TRUE(contains(v.levels[2].summary, "no fused attention kernel (fattn-wmma or fattn-mma or fattn-vec or fattn-tile or fattn-helpers or ^(?:void )?flash_attn_\\w+) among 23 kernels"))
      << v.levels[2].summary;
  EXPECT_TRUE(contains(v.disagreement_detail, "log says \"llama_context: flash_attn    = enabled\""))
      << v.disagreement_detail;
  EXPECT_TRUE(contains(v.disagreement_detail, "placement says 156 of 156 FLASH_ATTN nodes on CPU (none on CUDA0)"))
      << v.disagreement_detail;
  EXPECT_TRUE(contains(v.explanation, "graph splits 10")) << v.explanation;
  EXPECT_TRUE(contains(v.explanation, "NOT running on CUDA0 (silent fallback")) << v.explanation;
}

TEST(Verdict, Q5_1WithoutKernelsStillFallsBackAndSaysWhyLevel3IsMissing) {
  Verdict v = h200_verdict("mid_fa_on_q5_1", "", false);
  EXPECT_EQ(v.expected_backend, "CUDA0");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_TRUE(v.silent_fallback);
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2}));
  ASSERT_EQ(v.levels_unavailable.size(), 1u);
  EXPECT_EQ(v.levels_unavailable[0],
            "level 3 kernels: no tally given; attach the CUPTI probe (CUDA_INJECTION64_PATH) on a GPU machine");
}

TEST(Verdict, R2Q8_0Active) {
  Verdict v = h200_verdict("r2_q8_0", "CUDA0");
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_FALSE(v.disagreement);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CUDA0", 68}}));
}

TEST(Verdict, R2Q4_1SilentFallback) {
  Verdict v = h200_verdict("r2_q4_1", "CUDA0");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_TRUE(v.silent_fallback);
  EXPECT_TRUE(v.disagreement);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CPU", 68}}));
  EXPECT_TRUE(has_quote(v, "sched_reserve: graph splits = 10"));
}

TEST(Verdict, R2Hd80Active) {
  Verdict v = h200_verdict("r2_hd80_on", "CUDA0");
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CUDA0", 34}}));
}

TEST(Verdict, R2PartialOffloadNamed) {
  Verdict v = h200_verdict("r2_partial_ngl2", "CUDA0");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_TRUE(v.partial_offload);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_FALSE(v.disagreement);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CPU", 24}, {"CUDA0", 44}}));
  EXPECT_TRUE(contains(v.levels[1].summary, "FLASH_ATTN nodes: CUDA0 44, CPU 24 (44 of 68 FLASH_ATTN nodes on CUDA0)"))
      << v.levels[1].summary;
  EXPECT_TRUE(contains(v.explanation, "partial offload")) << v.explanation;
  EXPECT_TRUE(has_quote(v, "sched_reserve: graph splits = 35 (with bs=512), 2 (with bs=1)"));
  Verdict inferred = h200_verdict("r2_partial_ngl2", "");
  EXPECT_EQ(inferred.expected_backend, "");  // KV on CPU and CUDA0: no single device
  EXPECT_EQ(inferred.activity, Activity::NotActive);
  EXPECT_TRUE(inferred.partial_offload);
}

TEST(Verdict, R2Hd48AutoDisabledReasonQuoted) {
  Verdict v = h200_verdict("r2_hd48_auto", "CUDA0");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_FALSE(v.disagreement);
  EXPECT_EQ(v.levels[0].active, std::optional<bool>(false));
  EXPECT_TRUE(has_quote(v, "sched_reserve: Flash Attention was auto, set to disabled"));
  EXPECT_TRUE(has_quote(v,
                        "sched_reserve: layer 0 is assigned to device CUDA0 but the Flash Attention tensor is "
                        "assigned to device CPU (usually due to missing support)"));
  EXPECT_TRUE(contains(v.levels[0].summary, "reason: ")) << v.levels[0].summary;
}

VerdictInput input_for(const LogScan& log, const Placement& p, const KernelSummary* k, const std::string& expect) {
  VerdictInput in;
  in.log = &log;
  in.placement = &p;
  in.kernels = k;
  in.expect_backend = expect;
  in.hints = llama_signatures().hints;
  return in;
}

struct Scanned {
  LogScan log;
  Placement placement;
};
Scanned scan(const std::string& text) {
  const auto& sigs = llama_signatures();
  auto recs = split_records(text, sigs);
  return {scan_log(recs, sigs), scan_placement(recs, sigs)};
}

TEST(Verdict, LogWithNoMatchingLinesIsNoEvidence) {
  Scanned s = scan("hello\nworld\n");
  Verdict v = decide(input_for(s.log, s.placement, nullptr, ""));
  EXPECT_EQ(v.activity, Activity::NoEvidence);
  EXPECT_TRUE(v.levels_used.empty());
  ASSERT_EQ(v.levels_unavailable.size(), 3u);
  EXPECT_TRUE(contains(v.levels_unavailable[1], "no node records; run with GGML_SCHED_DEBUG=2 and -v"))
      << v.levels_unavailable[1];
  EXPECT_TRUE(contains(v.explanation, "no evidence either way")) << v.explanation;
}

TEST(Verdict, EmptyKernelTallyIsNoEvidenceAtLevel3) {
  const auto& run = fp::testing::h200_run("mid_fa_on");
  KernelSummary empty = classify_kernels(KernelTally{"empty.tsv", {}}, llama_signatures());
  Verdict v = decide(input_for(run.log, run.placement, &empty, "CUDA0"));
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2}));
  ASSERT_EQ(v.levels_unavailable.size(), 1u);
  EXPECT_TRUE(contains(v.levels_unavailable[0], "level 3 kernels: tally empty.tsv has no kernel records"))
      << v.levels_unavailable[0];
  EXPECT_FALSE(v.levels[2].used);
  // Only an empty tally and nothing else: no evidence, never a pass.
  Scanned none = scan("");
  Verdict only = decide(input_for(none.log, none.placement, &empty, "CUDA0"));
  EXPECT_EQ(only.activity, Activity::NoEvidence);
}

TEST(Verdict, LogAndKernelsDisagreeBothQuoted) {
  Scanned s = scan("llama_context: flash_attn    = enabled\n");
  auto tally = parse_kernel_tally("40\t900\tvoid soft_max_f32<true, 0, 0, float>(float const*)\n", "k.tsv");
  ASSERT_TRUE(tally.ok());
  KernelSummary k = classify_kernels(*tally, llama_signatures());
  Verdict v = decide(input_for(s.log, s.placement, &k, "CUDA0"));
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_TRUE(v.disagreement);
  EXPECT_TRUE(v.silent_fallback);
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 3}));
  EXPECT_TRUE(contains(v.disagreement_detail, "log says \"llama_context: flash_attn    = enabled\""))
      << v.disagreement_detail;
  EXPECT_TRUE(contains(v.disagreement_detail, "kernels says no fused attention kernel")) << v.disagreement_detail;
  EXPECT_TRUE(contains(v.disagreement_detail, "soft_max_f32<true, 0, 0, float>")) << v.disagreement_detail;
}

TEST(Verdict, LogDisabledButKernelsRanFusedIsDisagreement) {
  Scanned s = scan("llama_context: flash_attn    = disabled\n");
  auto tally = parse_kernel_tally("4\t900\tvoid flash_attn_ext_f16<64>(int)\n", "k.tsv");
  KernelSummary k = classify_kernels(*tally, llama_signatures());
  Verdict v = decide(input_for(s.log, s.placement, &k, "CUDA0"));
  EXPECT_TRUE(v.disagreement);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_EQ(v.activity, Activity::Active);  // strongest level; the disagreement still fails the case
}

const char* kCpuLog =
    "0.00.100.000 I llama_context: flash_attn    = auto\n"
    "0.00.100.001 I llama_kv_cache:        CPU KV buffer size =    64.00 MiB\n"
    "0.00.100.002 I llama_context: resolve_fused_ops: Flash Attention enabled\n"
    "0.00.100.003 D \n## SPLIT #0: CPU # 0 inputs0.00.100.004 D \n"
    "0.00.100.005 D node # 22 (FLASH_ATTN):          __fattn__-0 (  16K) [  CPU         ] use=1,c=1:"
    "0.00.100.006 D  Qcur-0 (view) (permu (  16K) [  CPU         ]0.00.100.007 D \n"
    "0.00.100.008 I sched_reserve: graph splits = 1\n";

TEST(Verdict, CpuOnlyRunIsActiveOnCpu) {
  Scanned s = scan(kCpuLog);
  Verdict v = decide(input_for(s.log, s.placement, nullptr, "CPU"));
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CPU", 1}}));
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2}));
  EXPECT_TRUE(has_quote(v, "llama_context: resolve_fused_ops: Flash Attention enabled"));
  Verdict inferred = decide(input_for(s.log, s.placement, nullptr, ""));
  EXPECT_EQ(inferred.expected_backend, "CPU");
  EXPECT_EQ(inferred.activity, Activity::Active);
}

TEST(Verdict, CpuExpectedMakesGpuKernelsNotApplicable) {
  Scanned s = scan(kCpuLog);
  auto tally = parse_kernel_tally("1\t2\tgemm\n", "k.tsv");
  KernelSummary k = classify_kernels(*tally, llama_signatures());
  Verdict v = decide(input_for(s.log, s.placement, &k, "CPU"));
  EXPECT_EQ(v.activity, Activity::Active);
  ASSERT_EQ(v.levels_unavailable.size(), 1u);
  EXPECT_TRUE(contains(v.levels_unavailable[0], "not applicable")) << v.levels_unavailable[0];
}

// Real CPU runs of Debian build 11669 on this machine (fixtures/logs/cpu/README.md).
TEST(Verdict, CpuBuild11669FaOnWithSchedDebugActiveOnCpu) {
  const auto& run = fp::testing::load_run_log_only("cpu", "b11669_tiny_fa_on_sched_debug");
  Verdict v = decide(input_for(run.log, run.placement, nullptr, "CPU"));
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2}));
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CPU", 30}}));
  EXPECT_EQ(run.log.split_counts(), std::vector<int>({1}));
  EXPECT_TRUE(has_quote(v, "llama_context: flash_attn            = enabled"));
  EXPECT_TRUE(has_quote(v, "sched_reserve: graph: nodes = 71, splits = 1, input objects = 4, input tensors = 9"));
  Verdict inferred = decide(input_for(run.log, run.placement, nullptr, ""));
  EXPECT_EQ(inferred.expected_backend, "CPU");
  EXPECT_EQ(inferred.activity, Activity::Active);
}

TEST(Verdict, CpuBuild11669FaOffSoftMaxOnCpu) {
  const auto& run = fp::testing::load_run_log_only("cpu", "b11669_tiny_fa_off_sched_debug");
  Verdict v = decide(input_for(run.log, run.placement, nullptr, "CPU"));
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_FALSE(v.disagreement);
  EXPECT_EQ(run.placement.unfused_nodes, (std::map<std::string, int>{{"CPU", 30}}));
  EXPECT_EQ(run.log.graph_nodes.back().value, 81);
}

TEST(Verdict, CpuBuild11669AutoResolvedEnabledLogOnlyIsNoEvidence) {
  const auto& run = fp::testing::load_run_log_only("cpu", "b11669_tiny_fa_auto_lv4");
  ResolvedState r = run.log.resolved();
  EXPECT_EQ(r.requested, "auto");
  EXPECT_TRUE(r.by_decision);
  EXPECT_EQ(r.quotes.back().text, "resolve_fused_ops: Flash Attention enabled");
  Verdict v = decide(input_for(run.log, run.placement, nullptr, "CPU"));
  // The log says "enabled" and nothing else speaks: the log alone never proves "active" (issue 13).
  EXPECT_EQ(v.activity, Activity::NoEvidence);
  ASSERT_EQ(v.missing_required.size(), 1u);
  EXPECT_TRUE(contains(v.missing_required[0], "the log alone never proves fused attention active")) << v.missing_required[0];
  EXPECT_TRUE(contains(v.explanation, "no evidence: the log alone never proves")) << v.explanation;
  EXPECT_EQ(v.levels_used, std::vector<int>({1}));
  ASSERT_EQ(v.levels_unavailable.size(), 2u);
  EXPECT_TRUE(contains(v.levels_unavailable[0], "level 2 placement: no node records")) << v.levels_unavailable[0];
  EXPECT_TRUE(contains(v.levels_unavailable[1], "level 3 kernels: no tally given")) << v.levels_unavailable[1];
}

TEST(Verdict, CpuBuild11669InfoLevelSignalsTieToSchedDebugRun) {
  const auto& quiet = fp::testing::load_run_log_only("cpu", "b11669_tiny_fa_on_lv4");
  const auto& verbose = fp::testing::load_run_log_only("cpu", "b11669_tiny_fa_on_sched_debug");
  EXPECT_EQ(quiet.log.split_counts(), std::vector<int>({1}));
  EXPECT_EQ(quiet.log.resolved().fused, std::optional<bool>(true));
  EXPECT_EQ(verbose.log.resolved().fused, std::optional<bool>(true));
  EXPECT_EQ(quiet.log.split_counts(), verbose.log.split_counts());
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

// Issue 13: a GPU box requires level 3; a probe that CUPTI refused, or that wrote no tally, is then
// "no evidence" with its reason, never a pass on levels 1 and 2 alone.
TEST(Verdict, RequiredKernelsRefusedByCuptiIsNoEvidenceWithTheReason) {
  const auto& run = fp::testing::h200_run("mid_fa_on");
  auto refused = parse_kernel_tally(
      "# flashproof-probe v2 status=refused state=final pid=9 cupti=130001 reason=cuptiSubscribe: "
      "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (CUptiResult 39)\n",
      "kernels.tsv");
  ASSERT_TRUE(refused.ok());
  KernelSummary k = classify_kernels(*refused, fp::testing::llama_signatures());
  VerdictInput in = verdict_input(fp::testing::llama_signatures());
  in.log = &run.log;
  in.placement = &run.placement;
  in.kernels = &k;
  in.expect_backend = "CUDA0";
  in.required = {"log", "placement", "kernels"};
  Verdict v = decide(in);
  EXPECT_EQ(v.activity, Activity::NoEvidence) << format_verdict(v);
  ASSERT_EQ(v.missing_required.size(), 1u);
  EXPECT_NE(v.missing_required[0].find("level 3 kernels is required and yielded nothing: tally kernels.tsv has no kernel "
                                       "records (no evidence: the probe saw nothing; probe status refused: cuptiSubscribe: "
                                       "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"),
            std::string::npos)
      << v.missing_required[0];
  in.kernels = nullptr;
  in.hints["kernels"] = "the probe wrote no tally (not loaded: CUDA_INJECTION64_PATH wrong, or the runtime never initialised CUDA)";
  Verdict none = decide(in);
  EXPECT_EQ(none.activity, Activity::NoEvidence);
  EXPECT_NE(none.explanation.find("the probe wrote no tally (not loaded"), std::string::npos) << none.explanation;
  in.required = {"log", "placement"};  // a CPU machine: levels 1 and 2 suffice
  EXPECT_EQ(decide(in).activity, Activity::Active);
}

TEST(Verdict, DefaultEvidenceLevelsOfThePlatform) {
  const auto& sigs = fp::testing::llama_signatures();
  EXPECT_EQ(default_evidence_levels(sigs, false), (std::vector<std::string>{"log", "placement"}));
  EXPECT_EQ(default_evidence_levels(sigs, true), (std::vector<std::string>{"log", "placement", "kernels"}));
  RuntimeSignatures no_placement;
  EXPECT_EQ(default_evidence_levels(no_placement, true), (std::vector<std::string>{"log", "kernels"}));
}

TEST(Verdict, VerdictAsExpectedIsOneRule) {
  EXPECT_TRUE(verdict_as_expected(Activity::Active, false, true));
  EXPECT_FALSE(verdict_as_expected(Activity::Active, true, true));
  EXPECT_FALSE(verdict_as_expected(Activity::NoEvidence, false, true));
  EXPECT_FALSE(verdict_as_expected(Activity::NoEvidence, false, false));
  EXPECT_TRUE(verdict_as_expected(Activity::NotActive, false, false));
  EXPECT_FALSE(verdict_as_expected(Activity::NotActive, false, true));
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

TEST(Verdict, EvidenceLostNamesEachLevelThatFellSilentAndWhy) {
  // Recorded H200 runs: with the tally the verdict used three levels, without it two.
  Verdict before = h200_verdict("mid_fa_on", "CUDA0");
  Verdict now = h200_verdict("mid_fa_on", "CUDA0", /*with_kernels=*/false);
  auto names = [](const Verdict& v) {
    std::vector<std::string> n;
    for (int l : v.levels_used) n.push_back(v.levels[static_cast<size_t>(l - 1)].name);
    return n;
  };
  ASSERT_EQ(names(before), (std::vector<std::string>{"log", "placement", "kernels"}));
  auto lost = evidence_lost(names(before), names(now), now.levels_unavailable, "with the baseline", "with the candidate");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].rfind("EVIDENCE LOST: level 3 (kernels) gave evidence with the baseline and none with the candidate: no tally given", 0),
            0u)
      << lost[0];
  EXPECT_TRUE(evidence_lost(names(before), names(before), {}, "a", "b").empty());
  // A level gained is no loss; two lost are two lines, in level order.
  EXPECT_TRUE(evidence_lost({"log"}, {"log", "kernels"}, {}, "a", "b").empty());
  auto two = evidence_lost({"log", "placement", "kernels"}, {"log"}, {"level 2 placement: no node records"}, "before", "now");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], "EVIDENCE LOST: level 2 (placement) gave evidence before and none now: no node records");
  EXPECT_EQ(two[1], "EVIDENCE LOST: level 3 (kernels) gave evidence before and none now");
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

// A batch job's FLASH_ATTN node count moves between launches of one build (36 and 40 on
// batch-tiny): the same devices are not a move; another device set is.
TEST(Verdict, FusedDevicesDifferBySetNotCount) {
  EXPECT_FALSE(fused_devices_differ({{"CPU", 40}}, {{"CPU", 36}}));
  EXPECT_FALSE(fused_devices_differ({{"CPU", 2}, {"CUDA0", 66}}, {{"CPU", 30}, {"CUDA0", 38}}));
  EXPECT_TRUE(fused_devices_differ({{"CUDA0", 68}}, {{"CPU", 30}, {"CUDA0", 38}}));
  EXPECT_TRUE(fused_devices_differ({{"CUDA0", 68}}, {{"CUDA1", 68}}));
  EXPECT_TRUE(fused_devices_differ({{"CUDA0", 68}}, {}));
}

}  // namespace
}  // namespace fp
