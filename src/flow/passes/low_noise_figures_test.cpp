#include "flow/passes/low_noise_figures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "flow/passes/figures.h"
#include "flow/passes/gated_figures.h"
#include "testing/recorded_runs.h"
#include "util/text.h"

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LowNoiseFigures, KernelTimePerTokenOneValuePerProbedLaunch) {
  const double nan = std::nan("");
  auto figs = kernel_figures({0.0025, nan, 0.0026}, {0.001, nan, 0.0011});
  ASSERT_EQ(figs.size(), 2u);
  EXPECT_EQ(figs[0].name, "gpu_kernel_ms_per_token");
  EXPECT_THAT(figs[0].launch_medians, ElementsAre(0.0025, 0.0026));  // a launch without a tally is left out
  EXPECT_EQ(figs[1].name, "attention_kernel_ms_per_token");
  EXPECT_TRUE(kernel_figures({nan}, {nan}).empty());
}

// The one definition of kernel time per token, on a recorded H200 tally (fixtures/logs/h200-live:
// the runtime's start-up and two requests of 1002 prompt tokens and 8 output tokens each).
TEST(LowNoiseFigures, KernelTimePerTokenIsTheLaunchsKernelTimeOverItsLoadsTokens) {
  auto tally = read_kernel_tally(testing::fixture("logs/h200-live/fa_on.quiet.kernels.tsv"));
  ASSERT_TRUE(tally.ok()) << tally.error().message;
  const KernelSummary k = classify_kernels(*tally, testing::llama_signatures());
  ASSERT_GT(k.total_ns, 0);
  const long long tokens = 2 * (1002 + 8);
  const KernelTimePerToken t = kernel_time_per_token(k, tokens);
  EXPECT_DOUBLE_EQ(t.gpu_ms, static_cast<double>(k.total_ns) * 1e-6 / tokens);
  EXPECT_DOUBLE_EQ(t.attention_ms, static_cast<double>(k.fused_ns + k.unfused_ns) * 1e-6 / tokens);
  EXPECT_NEAR(t.gpu_ms, 3.416 / 2020, 1e-6) << "3.416 ms of kernels over 2020 tokens";
  // Nothing to divide, or nothing divided: no figure (NaN, left out by kernel_figures).
  EXPECT_TRUE(std::isnan(kernel_time_per_token(k, 0).gpu_ms));
  EXPECT_TRUE(std::isnan(kernel_time_per_token(KernelSummary{}, tokens).gpu_ms));
  EXPECT_TRUE(kernel_figures({kernel_time_per_token(k, 0).gpu_ms}, {kernel_time_per_token(k, 0).attention_ms}).empty());
}

// Issue 41 item 3, what the side-by-side gate's old probed launch made the GPU do: its repeated
// prompts were not served from llama-server's prompt cache (the harness sends cache_prompt false),
// so every request paid its whole prefill. The same prompt sent twice on the H200, as recorded in the
// runtime's own log: 1002 tokens evaluated both times, none cached; the second prefill (warm) 7.79 ms
// against 5.55 ms for its 8 output tokens. So the old per-launch total held every prefill; what hid
// -ub 384 there was the decode beside it (32 output tokens per request on the 8B chat case), not a cache.
TEST(LowNoiseFigures, RecordedRepeatedPromptsPayTheirWholePrefillWithCachePromptFalse) {
  auto log = read_file(testing::fixture("logs/h200-live/fa_on.quiet.log.gz"));
  ASSERT_TRUE(log.ok()) << log.error().message;
  const std::regex cached(R"(cached n_tokens = (\d+), memory_seq_rm \[0, end\))");
  const std::regex prompt(R"(prompt eval time =\s+([0-9.]+) ms /\s+(\d+) tokens)");
  const std::regex decode(R"(\|\s+eval time =\s+([0-9.]+) ms /\s+(\d+) tokens)");
  std::vector<std::string> cached_n, prompt_n, prompt_ms, decode_ms;
  for (const auto& line : split_lines(*log)) {
    std::smatch m;
    if (std::regex_search(line, m, cached)) cached_n.push_back(m[1]);
    if (std::regex_search(line, m, prompt)) {
      prompt_ms.push_back(m[1]);
      prompt_n.push_back(m[2]);
    } else if (std::regex_search(line, m, decode)) {
      decode_ms.push_back(m[1]);
    }
  }
  EXPECT_THAT(cached_n, ElementsAre("0", "0"));
  EXPECT_THAT(prompt_n, ElementsAre("1002", "1002"));
  EXPECT_THAT(prompt_ms, ElementsAre("69.22", "7.79"));  // the cold request's first prefill, then warm
  EXPECT_THAT(decode_ms, ElementsAre("12.30", "5.55"));
}

std::vector<FigureResult> chat_figures_with_kernel() {
  FigureResult ttft, kernel, tpot;
  ttft.name = "ttft_ms_p95";
  ttft.gate = true;
  ttft.min_effect = MinEffect{0.05, 1};
  kernel.name = "gpu_kernel_ms_per_token";
  kernel.min_effect = MinEffect{0.05, 1e-6};
  tpot.name = "tpot_ms";
  return {ttft, kernel, tpot};
}

// On CUDA with the probe, the golden path gates kernel time first (at 1.25%: a 2% change caught
// on nearly every night), the job's host-clock gates at 25%.
TEST(LowNoiseFigures, OnCudaKernelTimeGatesFirstAndHostClocksWiden) {
  Case c;
  c.job = Job::Chat;
  auto figs = chat_figures_with_kernel();
  EXPECT_THAT(apply_gpu_gates(c, true, figs), HasSubstr("GPU kernel time per token gated first at 1.25%"));
  EXPECT_TRUE(figs[1].gate);
  EXPECT_DOUBLE_EQ(figs[1].min_effect.relative, kKernelTimeNightlyMinEffect);
  EXPECT_DOUBLE_EQ(figs[0].min_effect.relative, 0.25);
  EXPECT_DOUBLE_EQ(figs[0].min_effect.floor, 1.0);
  EXPECT_FALSE(figs[2].gate);
  // On a CPU case nothing changes.
  auto cpu = chat_figures_with_kernel();
  EXPECT_EQ(apply_gpu_gates(c, false, cpu), "");
  EXPECT_FALSE(cpu[1].gate);
  EXPECT_DOUBLE_EQ(cpu[0].min_effect.relative, 0.05);
  // The case's own minimum effect wins.
  c.plan.min_effect["ttft_ms"] = MinEffect{0.1, 1};
  auto named = chat_figures_with_kernel();
  apply_gpu_gates(c, true, named);
  EXPECT_DOUBLE_EQ(named[0].min_effect.relative, 0.05);  // left as the caller set it from the case
}

TEST(LowNoiseFigures, ThePlansGatedKernelFigureGatesItsPerTokenFigure) {
  Case c;
  c.job = Job::Chat;
  c.plan.gated = {"gpu_kernel_ms_per_token"};
  auto figs = chat_figures_with_kernel();
  EXPECT_THAT(apply_gpu_gates(c, false, figs), HasSubstr("gpu_kernel_ms_per_token"));
  EXPECT_TRUE(figs[1].gate);
  EXPECT_FALSE(figs[0].gate);  // exactly the case's choice: the job's TTFT gate gives way (and is guarded)
  c.plan.gated = {"cpu_ms_per_token", "ttft_ms"};
  auto cpu = chat_figures_with_kernel();
  EXPECT_EQ(apply_gpu_gates(c, false, cpu), "the case's plan.gated: none of them measured in this run");
  EXPECT_FALSE(cpu[0].gate);  // ttft_ms_p95 is not ttft_ms
}

TEST(LowNoiseFigures, ExpectsCudaFromTheCaseOrAllGpus) {
  Case c;
  c.expect.backends = {"CPU"};
  EXPECT_FALSE(expects_cuda(c, {"CUDA0"}));
  c.expect.backends = {"CUDA1"};
  EXPECT_TRUE(expects_cuda(c, {}));
  c.expect.backends = {"all-gpus"};
  EXPECT_TRUE(expects_cuda(c, {"CUDA0", "CUDA1"}));
  EXPECT_FALSE(expects_cuda(c, {"Vulkan0"}));
}

// The runtime's own timings and its CPU time per token are figures of every run.
TEST(LowNoiseFigures, ServerTimingsAndCpuTimePerTokenAreFigures) {
  TimedPass p;
  for (int i = 0; i < 3; ++i) {
    TimedRequest r;
    r.prompt_id = "a";
    r.round = i;
    r.result.ttft_s = 0.1;
    r.result.e2e_s = 0.2;
    r.result.prompt_tokens = 90;
    r.result.completion_tokens = 10;
    r.result.server.prompt_ms = 80.0 + i;
    r.result.server.decode_ms = 20.0;
    r.result.server.decode_tokens = 10;
    r.runtime_cpu_s = 0.2;
    p.requests.push_back(r);
  }
  std::map<std::string, double> median;
  for (const auto& f : compute_figures(Job::Chat, p)) median[f.name] = f.summary.median;
  EXPECT_DOUBLE_EQ(median.at("server_prompt_ms"), 81);
  EXPECT_DOUBLE_EQ(median.at("server_tpot_ms"), 2);
  EXPECT_DOUBLE_EQ(median.at("cpu_ms_per_token"), 2);  // 200 ms over 100 tokens
}

}  // namespace
}  // namespace fp
