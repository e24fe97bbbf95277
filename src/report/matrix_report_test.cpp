#include "report/matrix_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/text.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

MatrixRow row(const std::string& k, const std::string& v, bool on) {
  MatrixRow r;
  r.kv_k = k;
  r.kv_v = v;
  r.kv = k == v ? k : k + "/" + v;
  r.flag_on = on;
  r.flag_value = on ? "on" : "off";
  r.context = 2048;
  r.head_size = 32;
  r.outcome = RowOutcome::Ran;
  r.verdict = on ? "active" : "not active";
  r.verdict_as_flag = true;
  r.fused_op = "FLASH_ATTN";
  r.unfused_op = "SOFT_MAX";
  (on ? r.fused_nodes : r.unfused_nodes) = {{"CPU", 8}};
  r.kernels_note = "not probed: no NVIDIA GPU";
  r.server_prompt_tps = on ? 1500 : 1000;
  r.client_prompt_tps = on ? 1400 : 950;
  r.server_vs_off = on ? 1.5 : NAN;
  r.speed_rounds = 2;
  r.prompt_tokens = 900;
  return r;
}

TEST(MatrixReport, TheTableHasEveryRowAndItsColumns) {
  MatrixRun m;
  m.case_name = "chat-tiny-short";
  m.rows = {row("f16", "f16", true), row("f16", "f16", false), row("q8_0", "f16", true)};
  m.rows[2].outcome = RowOutcome::Failed;
  m.rows[2].detail = "evidence pass: the request failed";
  const auto lines = split_lines(matrix_table(m));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[0], HasSubstr("kv (K/V)"));
  EXPECT_THAT(lines[0], HasSubstr("attention kernels"));
  EXPECT_THAT(lines[1], HasSubstr("FLASH_ATTN CPU 8"));
  EXPECT_THAT(lines[1], HasSubstr("1500"));
  EXPECT_THAT(lines[1], HasSubstr("1.50x"));
  EXPECT_THAT(lines[2], HasSubstr("SOFT_MAX CPU 8"));
  EXPECT_THAT(lines[3], HasSubstr("q8_0/f16"));
  EXPECT_THAT(lines[3], HasSubstr("FAILED: active"));
  EXPECT_THAT(lines[3], HasSubstr("evidence pass: the request failed"));
  // Columns line up: "flag" starts at the same place on every line.
  const size_t at = lines[0].find("flag");
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i].substr(at, 2), i == 2 ? "of" : "on") << lines[i];
}

TEST(MatrixReport, JsonCarriesTheRowsAndWhetherEachIsAsExpected) {
  MatrixRun m;
  m.rows = {row("f16", "f16", true), row("q8_0", "q8_0", false)};
  m.rows[1].outcome = RowOutcome::Refused;
  m.rows[1].detail = "llama_init_from_model: quantized V cache requires flash_attn to be enabled";
  m.rows[1].server_prompt_tps = NAN;
  const auto j = matrix_to_json(m);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["outcome"], "ran");
  EXPECT_EQ(j["rows"][0]["fused_nodes"]["CPU"], 8);
  EXPECT_EQ(j["rows"][0]["prompt_speed"]["runtime_tokens_per_s"], 1500.0);
  EXPECT_EQ(j["rows"][1]["outcome"], "refused");
  EXPECT_TRUE(j["rows"][1]["as_expected"].get<bool>());
  EXPECT_TRUE(j["rows"][1]["prompt_speed"]["runtime_tokens_per_s"].is_null());
  EXPECT_EQ(j["rows"][1]["shown"]["verdict"], "refused by the runtime");
  EXPECT_THAT(matrix_to_text(m), HasSubstr("quantized V cache requires flash_attn to be enabled"));
}

// A degraded row says so in the table and on its own verdict line, with the runtime data's cause.
TEST(MatrixReport, ADegradedRowSaysItInTheTableAndOnItsVerdictLine) {
  MatrixRun m;
  m.rows = {row("q5_1", "q5_1", true)};
  Degradation d;
  d.k_type = d.v_type = "q5_1";
  d.converted_to = "f16";
  d.cause = "no vector kernel for head size 96";
  m.rows[0].degraded = d;
  EXPECT_THAT(matrix_table(m), HasSubstr("active, degraded"));
  const std::string text = matrix_to_text(m);
  EXPECT_THAT(text, HasSubstr("  verdict: active, degraded; levels: "));
  EXPECT_THAT(text, HasSubstr("no vector kernel for head size 96"));
}

TEST(MatrixReport, TimeToFirstTokenDecodeAndMemoryColumns) {
  MatrixRun m;
  m.rows = {row("f16", "f16", true), row("f16", "f16", false)};
  m.rows[0].flag_auto = true;
  m.rows[0].flag_value = "auto";
  m.rows[0].ttft_ms = 52.84;
  m.rows[0].server_decode_tps = 167.9;
  m.rows[0].decode_tokens = 32;
  m.rows[0].kv_mib = 4096;
  m.rows[0].compute_mib = 212.5;
  m.rows[1].kv_mib = 0.5;
  const auto lines = split_lines(matrix_table(m));
  EXPECT_THAT(lines[0], HasSubstr("TTFT ms  decode t/s  KV MiB  compute MiB"));
  EXPECT_THAT(lines[1], HasSubstr("52.8"));
  EXPECT_THAT(lines[1], HasSubstr("168"));
  EXPECT_THAT(lines[1], HasSubstr("4096"));
  EXPECT_THAT(lines[1], HasSubstr("212"));
  EXPECT_THAT(lines[2], HasSubstr("0.5"));  // small caches keep a decimal
  const auto j = matrix_to_json(m);
  EXPECT_EQ(j["rows"][0]["flag"], "auto");
  EXPECT_EQ(j["rows"][0]["prompt_speed"]["ttft_ms"], 52.84);
  EXPECT_EQ(j["rows"][0]["prompt_speed"]["decode_tokens"], 32);
  EXPECT_EQ(j["rows"][0]["memory"]["kv_cache_mib"], 4096.0);
  EXPECT_TRUE(j["rows"][1]["prompt_speed"]["ttft_ms"].is_null());
  EXPECT_THAT(matrix_to_text(m), HasSubstr("memory: KV cache 4096 MiB, compute buffers 212 MiB"));
}

TEST(MatrixReport, KernelsColumnSaysWhatTheProbeSaw) {
  MatrixRow r = row("f16", "f16", true);
  EXPECT_EQ(attention_kernels_text(r), "not probed");
  r.kernels_probed = true;
  r.fused_kernels = {"flash_attn_ext_f16<128, 128, 32, 2, false, false, false>", "flash_attn_ext_vec<128, 1>"};
  r.fused_kernel_names = 6;
  EXPECT_EQ(attention_kernels_text(r), "flash_attn_ext_f16<128, 128, 32, 2, false, false, false> +5 more");
  r.fused_kernels.clear();
  r.unfused_kernels = {"soft_max_f32<true, 0, 0>"};
  r.unfused_kernel_names = 1;
  EXPECT_EQ(attention_kernels_text(r), "unfused: soft_max_f32<true, 0, 0>");
  r.unfused_kernels.clear();
  r.kernels_note = "no attention kernel among 17";
  EXPECT_EQ(attention_kernels_text(r), "no attention kernel among 17");
}

}  // namespace
}  // namespace fp
