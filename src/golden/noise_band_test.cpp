#include "golden/noise_band.h"

#include <gtest/gtest.h>

#include "figure/figure_registry.h"

namespace fp {
namespace {

// The sitting spreads come from the figure registry; memory has none (its own policy), a name the
// registry does not hold the default, a concurrency level's figure its figure's.
TEST(NoiseBand, SittingSpreadFromTheRegistry) {
  EXPECT_EQ(sitting_sigma_rel("ttft_ms"), 0.10);
  EXPECT_EQ(sitting_sigma_rel("c4.ttft_ms_p95"), 0.15);
  EXPECT_EQ(sitting_sigma_rel("itl_ms"), kMaxSittingSigma);
  EXPECT_EQ(sitting_sigma_rel("cpu_ms_per_token", SittingScope::same_gpu), kMaxSittingSigma);
  EXPECT_EQ(sitting_sigma_rel("memory.kv_cache_mib"), 0);
  EXPECT_EQ(sitting_sigma_rel("not_a_figure"), kDefaultSittingSigma);
  EXPECT_EQ(sitting_sigma_rel("gpu_kernel_ms_per_token"), 0.005);
  EXPECT_EQ(sitting_sigma_rel("gpu_kernel_ms_per_token", SittingScope::same_gpu), 0.002);
  EXPECT_DOUBLE_EQ(sitting_prior_df("attention_kernel_ms_per_token", SittingScope::same_gpu), kMadEfficiency * 10);
  EXPECT_EQ(sitting_prior_df("attention_kernel_ms_per_token", SittingScope::unknown_gpu), 0);
  EXPECT_EQ(sitting_prior_df("ttft_ms", SittingScope::same_gpu), 0);
  EXPECT_STREQ(sitting_sigma_source("ttft_ms", SittingScope::same_gpu), sitting_sigma_source());
  EXPECT_NE(std::string(sitting_sigma_source("gpu_kernel_ms_per_token", SittingScope::same_gpu)), sitting_sigma_source());
  for (const auto& d : figure_registry()) EXPECT_LE(d.sitting_sigma, kMaxSittingSigma) << d.name;
}

// Every kernel-time figure, per token (both engines) and per launch (gate.json recorded before issue
// 41), has the GPU clocks' spread noise_band gave every "kernel_ms" figure before the registry held it.
TEST(NoiseBand, KernelTimeFiguresKeepTheGpuClocksSpread) {
  for (const char* name :
       {"gpu_kernel_ms_per_token", "attention_kernel_ms_per_token", "gpu_kernel_ms_per_launch", "attention_kernel_ms_per_launch"}) {
    EXPECT_EQ(sitting_sigma_rel(name), 0.005) << name;
    EXPECT_EQ(sitting_sigma_rel(name, SittingScope::same_gpu), 0.002) << name;
    EXPECT_DOUBLE_EQ(sitting_prior_df(name, SittingScope::same_gpu), kMadEfficiency * 10) << name;
    EXPECT_EQ(sitting_prior_df(name, SittingScope::unknown_gpu), 0) << name;
  }
}

}  // namespace
}  // namespace fp
