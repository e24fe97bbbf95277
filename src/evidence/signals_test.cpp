#include "evidence/signals.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>


namespace fp {
namespace {

using fp::testing::h200_run;

TEST(CheapSignals, FromRecordedLogs) {
  CheapSignals on = cheap_signals(h200_run("mid_fa_on").log);
  EXPECT_EQ(on.flash_attn, std::optional<bool>(true));
  EXPECT_EQ(on.graph_splits, std::vector<int>({2}));
  CheapSignals partial = cheap_signals(h200_run("r2_partial_ngl2").log);
  EXPECT_EQ(partial.graph_splits, std::vector<int>({2, 35}));
}

TEST(CheapSignals, SameStateAndSplitsTie) {
  EXPECT_TRUE(compare_signals(cheap_signals(h200_run("mid_fa_on").log), cheap_signals(h200_run("mid_fa_auto").log))
                  .empty());
}

TEST(CheapSignals, MismatchesAreNamed) {
  auto diff = compare_signals(cheap_signals(h200_run("mid_fa_on").log), cheap_signals(h200_run("mid_fa_on_q5_1").log));
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0], "graph splits: evidence pass 2, timed run 10");
  auto off = compare_signals(cheap_signals(h200_run("mid_fa_on").log), cheap_signals(h200_run("mid_fa_off").log));
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(off[0], "flash attention: evidence pass enabled, timed run disabled");
  auto quiet = compare_signals(cheap_signals(h200_run("mid_fa_on").log), CheapSignals{});
  ASSERT_EQ(quiet.size(), 2u);
  EXPECT_EQ(quiet[0], "flash attention: evidence pass enabled, timed run not stated");
}

}  // namespace
}  // namespace fp
