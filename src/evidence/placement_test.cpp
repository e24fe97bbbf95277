#include "evidence/placement.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>

#include <limits>


namespace fp {
namespace {

using fp::testing::h200_run;

TEST(Placement, MidFaOnAllFusedNodesOnCuda0) {
  const Placement& p = h200_run("mid_fa_on").placement;
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"CUDA0", 156}}));
  EXPECT_EQ(p.unfused_total(), 0);
  EXPECT_EQ(p.fused_op, "FLASH_ATTN");
  ASSERT_EQ(p.fused_example.count("CUDA0"), 1u);
  EXPECT_EQ(p.fused_example.at("CUDA0").text.rfind("node # 22 (FLASH_ATTN):          __fattn__-0", 0), 0u)
      << p.fused_example.at("CUDA0").text;
  EXPECT_EQ(p.splits_per_graph.size(), 39u);
  EXPECT_EQ(*std::max_element(p.splits_per_graph.begin(), p.splits_per_graph.end()), 2);
}

TEST(Placement, Q5_1FusedNodesOnCpuWithTenSplitGraphs) {
  const Placement& p = h200_run("mid_fa_on_q5_1").placement;
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"CPU", 156}}));
  EXPECT_EQ(*std::max_element(p.splits_per_graph.begin(), p.splits_per_graph.end()), 10);
}

TEST(Placement, MidFaOffSoftMaxPath) {
  const Placement& p = h200_run("mid_fa_off").placement;
  EXPECT_EQ(p.fused_total(), 0);
  EXPECT_EQ(p.unfused_nodes, (std::map<std::string, int>{{"CUDA0", 156}}));
  EXPECT_EQ(p.unfused_op, "SOFT_MAX");
  EXPECT_TRUE(p.has_records());
}

TEST(Placement, PartialOffloadIsACount) {
  const Placement& p = h200_run("r2_partial_ngl2").placement;
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"CPU", 24}, {"CUDA0", 44}}));
  EXPECT_EQ(format_counts(p.fused_nodes), "CUDA0 44, CPU 24");
  EXPECT_EQ(p.fused_example.size(), 2u);
}

TEST(Placement, Hd48AutoProbeNodesOnCpuThenSoftMaxOnCuda0) {
  const Placement& p = h200_run("r2_hd48_auto").placement;
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"CPU", 4}}));
  EXPECT_EQ(p.unfused_nodes, (std::map<std::string, int>{{"CUDA0", 34}}));
}

TEST(Placement, R2Counts) {
  EXPECT_EQ(h200_run("r2_q8_0").placement.fused_nodes, (std::map<std::string, int>{{"CUDA0", 68}}));
  EXPECT_EQ(h200_run("r2_q4_1").placement.fused_nodes, (std::map<std::string, int>{{"CPU", 68}}));
  EXPECT_EQ(h200_run("r2_hd80_on").placement.fused_nodes, (std::map<std::string, int>{{"CUDA0", 34}}));
  EXPECT_EQ(h200_run("mid_fa_auto").placement.fused_nodes, (std::map<std::string, int>{{"CUDA0", 164}}));
}

TEST(Placement, NoSchedulerRecords) {
  const auto& sigs = fp::testing::llama_signatures();
  Placement p = scan_placement(split_records("llama_context: flash_attn    = enabled\n", sigs), sigs);
  EXPECT_FALSE(p.has_records());
  EXPECT_EQ(format_counts(p.fused_nodes), "none");
}

// Found by fuzz/fuzz_log: index + 1 overflowed an int (undefined behaviour).
TEST(Placement, AbsurdSplitIndexDoesNotOverflow) {
  const auto& sigs = fp::testing::llama_signatures();
  auto records = split_records("## SPLIT #0: CPU # 0 inputs\n## SPLIT #2147483647: CPU # 0 inputs\n"
                               "## SPLIT #99999999999999999999: CPU # 0 inputs\n", sigs);
  Placement p = scan_placement(records, sigs);
  EXPECT_EQ(p.split_headers, 3);
  ASSERT_EQ(p.splits_per_graph.size(), 1u);
  EXPECT_EQ(p.splits_per_graph[0], std::numeric_limits<int>::max());
}

// Found by fuzz/fuzz_log: a long record (a logged request body) overflowed the stack in std::regex.
// Read whole now: a split header of 4 MiB is a split header.
TEST(Placement, LongRecordsAreReadWhole) {
  const auto& sigs = fp::testing::llama_signatures();
  std::string log = "## SPLIT #0: " + std::string(4 << 20, 'C') + " # 0 inputs\n## SPLIT #0: CPU # 0 inputs\n";
  Placement p = scan_placement(split_records(log, sigs), sigs);
  EXPECT_EQ(p.split_headers, 2);
}

}  // namespace
}  // namespace fp
