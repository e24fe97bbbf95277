#include "flow/passes/memory_figures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;

TEST(MemoryFigures, OneValuePerLaunchPerFigure) {
  LaunchMemory a, b;
  a.kv_total_mib = 32;
  a.kv_mib_by_device = {{"CPU", 32}};
  a.compute_mib_by_device = {{"CPU", 19}};
  a.host_peak_rss_mib = 300;
  b = a;
  b.host_peak_rss_mib = 310;
  b.gpu_peak_mib = 740;  // measured in one launch only
  auto figs = memory_figures({a, b});
  std::vector<std::string> names;
  for (const auto& f : figs) names.push_back(f.name);
  EXPECT_THAT(names, ElementsAre("memory.compute_mib.CPU", "memory.gpu_peak_mib", "memory.host_peak_rss_mib",
                                 "memory.kv_cache_mib", "memory.kv_cache_mib.CPU"));
  for (const auto& f : figs) {
    EXPECT_TRUE(f.gate) << f.name;
    EXPECT_TRUE(f.lower_is_better) << f.name;
  }
  EXPECT_THAT(figs[2].launch_medians, ElementsAre(300, 310));
  EXPECT_THAT(figs[1].launch_medians, ElementsAre(740));
  EXPECT_DOUBLE_EQ(figs[2].summary.median, 305);
}

TEST(MemoryFigures, DeviceNamesBecomeFigureNameParts) {
  LaunchMemory a;
  a.compute_mib_by_device = {{"CUDA_Host", 4}, {"odd dev/1", 2}};
  auto figs = memory_figures({a});
  ASSERT_EQ(figs.size(), 2u);
  EXPECT_EQ(figs[0].name, "memory.compute_mib.CUDA_Host");
  EXPECT_EQ(figs[1].name, "memory.compute_mib.odd_dev_1");
}

TEST(MemoryFigures, NothingMeasuredNoFigure) { EXPECT_TRUE(memory_figures({LaunchMemory{}}).empty()); }

}  // namespace
}  // namespace fp
