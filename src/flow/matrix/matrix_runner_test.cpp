#include "flow/matrix/matrix_runner.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

MatrixRow speed_row(const std::string& kv, bool on, int head, double server, double client) {
  MatrixRow r;
  r.kv_k = r.kv_v = kv;
  r.flag_on = on;
  r.context = 2048;
  r.head_size = head;
  r.model_sha256 = "sha-hd" + std::to_string(head);
  r.server_prompt_tps = server;
  r.client_prompt_tps = client;
  r.outcome = RowOutcome::Ran;
  return r;
}

TEST(MatrixRunner, FlagOnIsComparedWithTheFlagOffOfTheSameCombination) {
  std::vector<MatrixRow> rows = {speed_row("f16", true, 32, 1500, 1400), speed_row("f16", false, 32, 1000, 700),
                                 speed_row("q8_0", true, 32, 900, 800), speed_row("q8_0", false, 32, 1800, 1600),
                                 speed_row("f16", true, 64, 600, 500)};  // no off row for head size 64
  compare_with_flag_off(rows);
  EXPECT_DOUBLE_EQ(rows[0].server_vs_off, 1.5);
  EXPECT_DOUBLE_EQ(rows[0].client_vs_off, 2.0);
  EXPECT_DOUBLE_EQ(rows[2].server_vs_off, 0.5);
  EXPECT_TRUE(std::isnan(rows[1].server_vs_off));  // off rows are the reference
  EXPECT_TRUE(std::isnan(rows[4].server_vs_off));
  rows[1].server_prompt_tps = NAN;  // the off row's speed not measured
  compare_with_flag_off(rows);
  EXPECT_TRUE(std::isnan(rows[0].server_vs_off));
  EXPECT_DOUBLE_EQ(rows[0].client_vs_off, 2.0);
}

TEST(MatrixRunner, ExitCodeRanAndRefusedAreAsExpectedFailedIsNot) {
  MatrixRun m;
  m.rows = {speed_row("f16", true, 32, 1, 1), speed_row("q8_0", false, 32, 1, 1)};
  m.rows[1].outcome = RowOutcome::Refused;
  EXPECT_EQ(matrix_exit_code(m), kMatrixAsExpected);
  m.rows[0].verdict = "not active";  // a fallback is a row of the report, not a failure
  m.rows[0].verdict_as_flag = false;
  EXPECT_EQ(matrix_exit_code(m), kMatrixAsExpected);
  m.rows[1].outcome = RowOutcome::Failed;
  EXPECT_EQ(matrix_exit_code(m), kMatrixRowFailed);
  m.rows[1].outcome = RowOutcome::NotRun;
  EXPECT_EQ(matrix_exit_code(m), kMatrixRowFailed);
  m.errors.push_back("interrupted");
  EXPECT_EQ(matrix_exit_code(m), kMatrixIncomplete);
}

}  // namespace
}  // namespace fp
