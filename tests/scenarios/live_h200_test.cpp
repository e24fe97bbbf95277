// The verdicts on the live H200 recordings (fixtures/logs/h200-live): Debian sid's llama-server
// (build 11669, ggml 0.27.0) with its own CUDA backend on an H200, flashproof's CUPTI probe injected,
// each configuration run twice with the same two requests: "verbose" (-v, GGML_SCHED_DEBUG=2: the
// evidence pass) and "quiet" (-lv 4: the timed configuration), the probe attached in both.
// How they were made: fixtures/logs/h200-live/README.md and docs/gpu-checks.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "evidence/kernel_set.h"
#include "testing/recorded_runs.h"
#include "util/text.h"

namespace fp {
namespace {

using fp::testing::Run;

const Run& live_run(const std::string& name) {
  static std::map<std::string, Run> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, fp::testing::load_run("h200-live", name)).first;
  return it->second;
}

// Placement only where the run had it (the quiet runs have no node records, as the harness's timed runs).
Verdict live_verdict(const std::string& name, const std::string& expect = "CUDA0") {
  const Run& run = live_run(name);
  VerdictInput in;
  in.log = &run.log;
  in.placement = &run.placement;
  in.kernels = &run.kernels;
  in.expect_backend = expect;
  in.hints = fp::testing::llama_signatures().hints;
  return decide(in);
}

bool has_quote(const Verdict& v, const std::string& text) {
  return std::find(v.quotes.begin(), v.quotes.end(), text) != v.quotes.end();
}
bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

const std::vector<std::string> kConfigs = {"fa_on",      "fa_off",          "fa_on_q5_1",  "fa_on_q4_1",
                                           "fa_on_q8_0_q4_0", "hd48_fa_on", "hd48_fa_auto"};

TEST(LiveH200, FaOnActiveOnCuda0AllThreeLevelsAgree) {
  Verdict v = live_verdict("fa_on.verbose");
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2, 3}));
  EXPECT_TRUE(v.levels_unavailable.empty());
  EXPECT_FALSE(v.disagreement);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_FALSE(v.partial_offload);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CUDA0", 76}}));
  for (const auto& f : v.levels) EXPECT_EQ(f.active, std::optional<bool>(true)) << f.name;
  EXPECT_TRUE(has_quote(v, "llama_context: flash_attn            = enabled"));
  EXPECT_TRUE(has_quote(v, "sched_reserve: graph: nodes = 133, splits = 2, input objects = 4, input tensors = 9"));
  EXPECT_TRUE(has_quote(v, "flash_attn_ext_f16<128, 128, 32, 2, false, false, false>"));
  EXPECT_TRUE(contains(v.explanation, "76 of 76 FLASH_ATTN nodes on CUDA0")) << v.explanation;
  EXPECT_TRUE(contains(v.explanation, "160 fused attention kernel launches")) << v.explanation;
  EXPECT_TRUE(contains(v.explanation, "fused attention is active on CUDA0")) << v.explanation;
}

TEST(LiveH200, FaOffNotActiveSoftMaxOnCuda0) {
  Verdict v = live_verdict("fa_off.verbose");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_EQ(v.levels_used, std::vector<int>({1, 2, 3}));
  EXPECT_FALSE(v.disagreement);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_TRUE(v.fused_backends.empty());
  EXPECT_TRUE(has_quote(v, "llama_context: flash_attn            = disabled"));
  EXPECT_TRUE(has_quote(v, "soft_max_f32<true, 1024, 1024, float>"));
  EXPECT_TRUE(contains(v.levels[1].summary, "no fused attention node; SOFT_MAX nodes: CUDA0 76")) << v.levels[1].summary;
  EXPECT_TRUE(contains(v.levels[2].summary, "80 unfused attention launches")) << v.levels[2].summary;
}

// The recorded May 2026 build (fixtures/logs/h200/mid_fa_on_q5_1) placed every FLASH_ATTN node on the
// CPU with a q5_1 cache. ggml 0.27.0 keeps them on CUDA0: it converts the quantized K/V to f16
// (dequantize_block<..., dequantize_q5_1, __half>) and runs the f16 kernels.
TEST(LiveH200, Q5_1CacheStaysOnCuda0OnThisBuild) {
  Verdict v = live_verdict("fa_on_q5_1.verbose");
  EXPECT_EQ(v.activity, Activity::Active);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_FALSE(v.disagreement);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CUDA0", 76}}));
  EXPECT_TRUE(has_quote(v, "sched_reserve: graph: nodes = 181, splits = 2, input objects = 4, input tensors = 11"));
  const auto& fused = live_run("fa_on_q5_1.verbose").kernels.fused_names;
  EXPECT_NE(std::find(fused.begin(), fused.end(),
                      "void flash_attn_ext_vec<128, 1, (ggml_type)1, (ggml_type)1, false>(char const*, char const*, "
                      "char const*, char const*, char const*, int const*, float*, float2*, float, float, float, float, "
                      "unsigned int, float, int, uint3, int, int, int, int, int, int, int, int, int, int, int, long, "
                      "int, int, long, int, int, int, int, int, long)"),
            fused.end());
}

TEST(LiveH200, Q4_1AndQ8_0WithQ4_0CachesActiveOnCuda0) {
  for (const char* name : {"fa_on_q4_1.verbose", "fa_on_q8_0_q4_0.verbose"}) {
    Verdict v = live_verdict(name);
    EXPECT_EQ(v.activity, Activity::Active) << name;
    EXPECT_FALSE(v.silent_fallback) << name;
    EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CUDA0", 76}})) << name;
  }
}

// Head size 48: no CUDA Flash Attention kernel; -fa on keeps the op and the scheduler runs it on the CPU.
TEST(LiveH200, HeadSize48SilentFallbackToCpu) {
  Verdict v = live_verdict("hd48_fa_on.verbose");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_TRUE(v.silent_fallback);
  EXPECT_TRUE(v.disagreement);
  // Only the log's word against placement and kernels, which agree: the matrix's finding, no failure.
  EXPECT_FALSE(v.measured_disagreement);
  EXPECT_FALSE(v.partial_offload);
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CPU", 38}}));
  EXPECT_TRUE(has_quote(v, "sched_reserve: graph: nodes = 71, splits = 6, input objects = 4, input tensors = 9"));
  EXPECT_TRUE(contains(v.levels[2].summary, "no fused attention kernel (fattn-wmma or fattn-mma or fattn-vec or fattn-tile or fattn-helpers or ^(?:void )?flash_attn_\\w+) among 17 kernels"))
      << v.levels[2].summary;
  EXPECT_TRUE(contains(v.disagreement_detail, "placement says 38 of 38 FLASH_ATTN nodes on CPU (none on CUDA0)"))
      << v.disagreement_detail;
  EXPECT_TRUE(contains(v.explanation, "graph splits 6")) << v.explanation;
  EXPECT_TRUE(contains(v.explanation, "NOT running on CUDA0 (silent fallback")) << v.explanation;
}

// With -fa auto the same model gets Flash Attention turned off openly, the reason in the log.
TEST(LiveH200, HeadSize48AutoDisabledOpenly) {
  Verdict v = live_verdict("hd48_fa_auto.verbose");
  EXPECT_EQ(v.activity, Activity::NotActive);
  EXPECT_FALSE(v.silent_fallback);
  EXPECT_TRUE(has_quote(v, "resolve_fused_ops: Flash Attention not supported, set to disabled"));
  // Build 11669's wording of the reason (the May build said "the Flash Attention tensor"): data only.
  EXPECT_TRUE(has_quote(v, "resolve_fused_ops: layer 0 is assigned to device CUDA0 but Flash Attention is assigned to device CPU (usually due to missing support)"));
  EXPECT_TRUE(contains(v.levels[0].summary, "resolved: \"resolve_fused_ops: Flash Attention not supported, set to disabled\""))
      << v.levels[0].summary;
  EXPECT_EQ(v.fused_backends, (std::map<std::string, int>{{"CPU", 4}}));
  EXPECT_TRUE(contains(v.levels[1].summary, "SOFT_MAX nodes: CUDA0 38")) << v.levels[1].summary;
  EXPECT_TRUE(contains(v.levels[2].summary, "40 unfused attention launches")) << v.levels[2].summary;
}

// The quiet (timed) configuration: no placement, the same verdict from the log and the kernels.
TEST(LiveH200, QuietRunsReachTheVerboseVerdictFromLogAndKernels) {
  for (const auto& c : kConfigs) {
    Verdict verbose = live_verdict(c + ".verbose");
    Verdict quiet = live_verdict(c + ".quiet");
    EXPECT_EQ(quiet.activity, verbose.activity) << c;
    EXPECT_EQ(quiet.silent_fallback, verbose.silent_fallback) << c;
    EXPECT_EQ(quiet.levels_used, std::vector<int>({1, 3})) << c;
    ASSERT_EQ(quiet.levels_unavailable.size(), 1u) << c;
    EXPECT_TRUE(contains(quiet.levels_unavailable[0], "level 2 placement")) << quiet.levels_unavailable[0];
  }
}

// Same request, same server, same card: the probe saw the same attention kernels with and without
// the verbose evidence settings (indeed every kernel name with the same launch count).
TEST(LiveH200, QuietAndVerboseRanTheSameKernels) {
  for (const auto& c : kConfigs) {
    const KernelSummary& v = live_run(c + ".verbose").kernels;
    const KernelSummary& q = live_run(c + ".quiet").kernels;
    EXPECT_GT(v.records, 0u) << c;
    EXPECT_EQ(q.records, v.records) << c;
    EXPECT_EQ(q.fused_names, v.fused_names) << c;
    EXPECT_EQ(q.unfused_names, v.unfused_names) << c;
    EXPECT_EQ(q.fused_launches, v.fused_launches) << c;
    EXPECT_EQ(q.unfused_launches, v.unfused_launches) << c;
    auto launches = [](const std::string& name) {
      std::map<std::string, long long> m;
      auto t = read_kernel_tally(fp::testing::fixture("logs/h200-live/" + name + ".kernels.tsv"));
      EXPECT_TRUE(t.ok()) << name;
      if (t)
        for (const auto& k : t->kernels) m[k.name] = k.launches;
      return m;
    };
    EXPECT_EQ(launches(c + ".quiet"), launches(c + ".verbose")) << c;
    // What the harness's probed check (flow/passes/probed_check.h) compares: it ties.
    EXPECT_TRUE(compare_kernel_sets(attention_kernel_set(v), attention_kernel_set(q)).empty()) << c;
  }
}

// flashproof's own probed check ran live (fixtures/logs/h200-live/harness, round 3): for each case the
// evidence pass's tally and the probed timed configuration's tie, and the result file says so.
TEST(LiveH200, HarnessProbedCheckTiedOnTheGpu) {
  const auto& sigs = fp::testing::llama_signatures();
  for (const std::string c : {"live-cuda-realistic-fa-on", "live-cuda-realistic-fa-on-q5-1", "live-cuda-hd48-fa-on"}) {
    auto ev = read_kernel_tally(fp::testing::fixture("logs/h200-live/harness/" + c + ".kernels.tsv"));
    auto pc = read_kernel_tally(fp::testing::fixture("logs/h200-live/harness/" + c + ".kernels-probed-check.tsv"));
    ASSERT_TRUE(ev.ok() && pc.ok()) << c;
    const AttentionKernelSet a = attention_kernel_set(classify_kernels(*ev, sigs));
    const AttentionKernelSet b = attention_kernel_set(classify_kernels(*pc, sigs));
    EXPECT_GT(b.records, 0u) << c;
    EXPECT_TRUE(compare_kernel_sets(a, b).empty()) << c;
    auto result = read_file(fp::testing::fixture("logs/h200-live/harness/" + c + ".result.txt"));
    ASSERT_TRUE(result.ok()) << c;
    EXPECT_TRUE(contains(*result, "signals.probed_check = attention kernels identical to the evidence pass")) << c;
  }
  // The fallback case ran no attention kernel on the GPU in either run: the FLASH_ATTN nodes were on the CPU.
  auto hd48 = read_kernel_tally(fp::testing::fixture("logs/h200-live/harness/live-cuda-hd48-fa-on.kernels.tsv"));
  ASSERT_TRUE(hd48.ok());
  EXPECT_TRUE(attention_kernel_set(classify_kernels(*hd48, sigs)).fused.empty());
}

TEST(LiveH200, EveryTallyIsAFinalOkProbeTally) {
  for (const auto& c : kConfigs) {
    for (const char* mode : {".verbose", ".quiet"}) {
      auto text = read_file(fp::testing::fixture("logs/h200-live/" + c + mode + ".kernels.tsv"));
      ASSERT_TRUE(text.ok()) << c << mode;
      EXPECT_EQ(text->rfind("# flashproof-probe v1 status=ok state=final ", 0), 0u) << c << mode;
    }
  }
}

}  // namespace
}  // namespace fp
