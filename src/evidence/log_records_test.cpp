#include "evidence/log_records.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>


namespace fp {
namespace {

using fp::testing::llama_signatures;

TEST(LogRecords, SplitsSeveralTimestampedRecordsOfOneLine) {
  std::string log =
      "0.00.283.397 D node # 12 (FLASH_ATTN):          __fattn__-0 (  16K) [  CPU         ] use=1,c=1:"
      "0.00.283.398 D  Qcur-0 (view) (permu (  16K) [CUDA0         ]0.00.283.399 D \n"
      "0.00.283.400 I sched_reserve: graph splits = 10\n";
  auto recs = split_records(log, llama_signatures());
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].text, "node # 12 (FLASH_ATTN):          __fattn__-0 (  16K) [  CPU         ] use=1,c=1:");
  EXPECT_EQ(recs[0].line, 1u);
  EXPECT_EQ(recs[1].text, "Qcur-0 (view) (permu (  16K) [CUDA0         ]");
  EXPECT_EQ(recs[2].text, "sched_reserve: graph splits = 10");
  EXPECT_EQ(recs[2].line, 2u);
}

TEST(LogRecords, LinesWithoutTimestampsAreRecords) {
  auto recs = split_records("llama_context: flash_attn    = enabled\r\n\n  graph splits = 2  \n", llama_signatures());
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].text, "llama_context: flash_attn    = enabled");
  EXPECT_EQ(recs[1].text, "graph splits = 2");
  EXPECT_EQ(recs[1].line, 3u);
}

TEST(LogRecords, HeaderAfterPrefixOnNextLineStandsAlone) {
  auto recs = split_records("0.00.326.194 D \n## SPLIT #0: CPU # 0 inputs0.00.326.197 D \n", llama_signatures());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].text, "## SPLIT #0: CPU # 0 inputs");
  EXPECT_EQ(recs[0].line, 2u);
}

}  // namespace
}  // namespace fp
