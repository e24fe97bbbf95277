#include "flow/matrix/matrix_runner.h"

#include <gtest/gtest.h>

#include <cmath>

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

TEST(MatrixRunner, AnInterruptUnderTheSpeedLaunchKeepsTheEvidencePassVerdict) {
  // The H100 row this comes from: -ctk iq4_nl on the 8B shape, FLASH_ATTN on the CPU (a silent
  // fallback), the deadline's SIGTERM during the slow speed launch (fixtures/logs/h100-shapes/call-1).
  MatrixRow cut_in_speed = speed_row("iq4_nl", true, 128, 50, 40);
  cut_in_speed.verdict = "not active";
  cut_in_speed.silent_fallback = true;
  cut_in_speed.kv_mib = 1152;
  cut_in_speed.ttft_ms = 9000;
  settle_interrupted_row(cut_in_speed, RowCut::speed);
  EXPECT_EQ(cut_in_speed.outcome, RowOutcome::Ran);
  EXPECT_EQ(cut_in_speed.verdict, "not active");
  EXPECT_TRUE(cut_in_speed.silent_fallback);
  EXPECT_DOUBLE_EQ(cut_in_speed.kv_mib, 1152);
  EXPECT_TRUE(std::isnan(cut_in_speed.server_prompt_tps));  // a cut launch's timings are not the combination's
  EXPECT_TRUE(std::isnan(cut_in_speed.ttft_ms));
  EXPECT_NE(cut_in_speed.speed_note.find("interrupted during the prompt-speed launch"), std::string::npos);

  MatrixRow cut_in_evidence = speed_row("iq4_nl", true, 128, 50, 40);
  cut_in_evidence.verdict = "not active";
  settle_interrupted_row(cut_in_evidence, RowCut::evidence);
  EXPECT_EQ(cut_in_evidence.outcome, RowOutcome::NotRun);
  EXPECT_EQ(cut_in_evidence.detail, "interrupted while it ran");

  MatrixRow whole = speed_row("f16", true, 128, 50, 40);
  settle_interrupted_row(whole, RowCut::none);
  EXPECT_DOUBLE_EQ(whole.server_prompt_tps, 50);

  MatrixRun m;  // the matrix itself is still incomplete
  m.rows = {cut_in_speed};
  m.errors.push_back("interrupted (signal 15): the rows not run say so");
  EXPECT_EQ(matrix_exit_code(m), kMatrixIncomplete);
}

}  // namespace
}  // namespace fp
