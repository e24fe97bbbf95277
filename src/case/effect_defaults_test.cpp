#include "case/effect_defaults.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "case/case_file.h"

namespace fp {
namespace {

TEST(EffectDefaults, FloorsByFigureInTheFiguresUnit) {
  EXPECT_DOUBLE_EQ(default_floor("ttft_ms"), 1.0);
  EXPECT_DOUBLE_EQ(default_floor("ttft_ms_p95"), 1.0);      // the row's name and "_"
  EXPECT_DOUBLE_EQ(default_floor("c8.ttft_ms_p95"), 1.0);   // a concurrency level's figure
  EXPECT_DOUBLE_EQ(default_floor("cold_first_ttft_ms"), 1.0);
  EXPECT_DOUBLE_EQ(default_floor("itl_ms"), 0.05);
  EXPECT_DOUBLE_EQ(default_floor("gpu_kernel_ms_per_token"), 1e-6);
  EXPECT_DOUBLE_EQ(default_floor("gpu_kernel_ms_per_launch"), 0.01);  // what gate.json recorded before issue 41
  EXPECT_DOUBLE_EQ(default_floor("decode_tokens_per_s"), 0);  // rates have none
  EXPECT_DOUBLE_EQ(default_floor("client_minus_server_prompt_ms"), 0);
  EXPECT_EQ(base_figure_name("c16.itl_ms"), "itl_ms");
  EXPECT_EQ(base_figure_name("cold_ready_ms"), "cold_ready_ms");
}

TEST(EffectDefaults, EveryFloorRowSaysWhy) {
  for (const auto& row : floor_table()) {
    EXPECT_GT(row.floor, 0) << row.figure;
    EXPECT_FALSE(row.why.empty()) << row.figure;
  }
}

TEST(EffectDefaults, TheDefaultMinimumEffectIsFivePercentWithTheFloor) {
  for (Job job : {Job::Chat, Job::Completion, Job::Extraction, Job::Batch}) {
    EXPECT_EQ(default_min_effect(job, "ttft_ms_p95"), (MinEffect{kDefaultMinEffect, 1.0}));
    EXPECT_EQ(default_min_effect(job, "throughput_tokens_per_s"), (MinEffect{kDefaultMinEffect, 0}));
  }
}

TEST(EffectDefaults, EveryFigureAUserFeelsHasAGuard) {
  for (const auto& f : user_felt_figures()) {
    auto g = default_guard(Job::Chat, f);
    ASSERT_TRUE(g.has_value()) << f;
    EXPECT_DOUBLE_EQ(g->relative, kDefaultGuardEffect);
    EXPECT_DOUBLE_EQ(g->floor, default_floor(f));
  }
  EXPECT_TRUE(default_guard(Job::Batch, "c4.tpot_ms").has_value());
  EXPECT_FALSE(default_guard(Job::Chat, "server_prompt_ms").has_value());
  EXPECT_FALSE(default_guard(Job::Chat, "cold_ready_ms").has_value());
  EXPECT_FALSE(default_guard(Job::Chat, "memory.kv_cache_mib").has_value());
}

}  // namespace
}  // namespace fp
