#include "report/html_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "history/history.h"
#include "report/matrix_report.h"
#include "report/result_file.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

TrendPoint point(const std::string& build, double ttft, const std::string& status = "pass") {
  TrendPoint p;
  p.finished_utc = "2026-11-30T00:00:00Z";
  p.fingerprint = "fp-" + build;
  p.runtime_build = build;
  p.status = status;
  p.p50["ttft_ms"] = ttft;
  return p;
}

TEST(TrendSteps, TheDayABuildCostTwentyPercent) {
  std::vector<TrendPoint> pts = {point("b1", 100), point("b1", 101), point("b1", 99), point("b2", 120), point("b2", 121), point("b2", 119)};
  auto steps = trend_steps(pts, "ttft_ms");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].index, 3u);
  EXPECT_EQ(steps[0].from_build, "b1");
  EXPECT_EQ(steps[0].to_build, "b2");
  EXPECT_DOUBLE_EQ(steps[0].before, 100);
  EXPECT_DOUBLE_EQ(steps[0].after, 120);
  EXPECT_NEAR(steps[0].change_rel, 0.20, 1e-12);
  EXPECT_TRUE(trend_steps(pts, "no_such_figure").empty());
  EXPECT_TRUE(trend_steps({point("b1", 1), point("b1", 2)}, "ttft_ms").empty());
}

RunResult sample_run(const std::string& build, double ttft_scale) {
  RunResult r;
  r.case_name = "chat-tiny";
  r.case_file = "cases/chat-tiny.json";
  r.job = "chat";
  r.runtime = "llama-server";
  r.runtime_build = build;
  r.fingerprint_id = "fp1";
  r.flag_value = "on";
  r.started_utc = "2026-11-30T00:00:00Z";
  r.complete = true;
  r.verdict.activity = Activity::Active;
  r.verdict.fused_backends = {{"CPU", 30}};
  r.verdict.as_expected = true;
  r.verdict.levels_used = {"log", "placement"};
  r.verdict.quotes = {"llama_context: flash_attn = enabled"};
  r.expect_backend = "CPU";
  FigureResult f;
  f.name = "ttft_ms_p95";
  f.samples = {10 * ttft_scale, 11 * ttft_scale, 12 * ttft_scale, 30 * ttft_scale};
  f.summary = summarize(f.samples);
  f.gate = true;
  r.figures.push_back(f);
  r.kv_mib_by_device["CPU"] = 1.0;
  r.compute_mib_by_device["CPU"] = 4.27;
  r.peak_rss_mib = 27.2;
  AnswerResult a;
  a.prompt_id = "greeting";
  a.text = "</code><script>alert('x')</script>";
  a.reference = "identical";
  r.answers.push_back(a);
  return r;
}

class ReportTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("fp-report-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string add_run(const std::string& stamp, const RunResult& r) {
    const fs::path dir = root_ / "fp1" / r.case_name / stamp;
    fs::create_directories(dir);
    RunResult copy = r;
    copy.output_dir = dir.string();
    EXPECT_TRUE(write_result_files(dir.string(), copy));
    EXPECT_TRUE(record_run(root_.string(), {"2026-11-30T00:00:0" + stamp.substr(stamp.size() - 1) + "Z", "fp1", r.case_name, copy.status(), dir.string()}));
    return dir.string();
  }
  fs::path root_;
};

TEST_F(ReportTree, RendersEveryPartSelfContained) {
  for (int i = 0; i < 3; ++i) add_run("20261130T00000" + std::to_string(i) + "Z-1", sample_run("b100", 1.0));
  for (int i = 3; i < 6; ++i) add_run("20261130T00000" + std::to_string(i) + "Z-1", sample_run("b200", 1.2));
  // An A/B run beside them.
  const fs::path ab = root_ / "fp1" / "chat-tiny" / "ab-20261130T000009Z-2";
  fs::create_directories(ab);
  ASSERT_TRUE(write_file_atomic((ab / "ab.json").string(), R"({"case":"chat-tiny","decision":{"exit_code":0,"text":"pass: ttft_ms better with the flag on"},
    "arms":{"off":{"flag_value":"off","evidence":{"verdict":"not active","as_required":true},"launches":3,
                   "figures":{"ttft_ms":{"samples":[20,21,22,25]}},"memory":{"kv_buffer_mib":{"CPU":1.0},"compute_buffer_mib":{"CPU":8.5}}},
            "on":{"flag_value":"on","evidence":{"verdict":"active","as_required":true},"launches":3,
                  "figures":{"ttft_ms":{"samples":[10,11,12,13]}},"memory":{"kv_buffer_mib":{"CPU":1.0},"compute_buffer_mib":{"CPU":4.2}}}},
    "figures":[{"figure":"ttft_ms","gate":true,"median_off":21.5,"median_on":11.5,"diff":-10,"diff_rel":-0.465,"ci95":[-12,-8],
                "mann_whitney_p":0.03,"effect":"better with the flag on"}],
    "mechanism":[],"answers":{"same_system":"identical answers"}})"));

  auto data = load_report_data((root_ / "fp1").string());
  ASSERT_TRUE(data) << data.error().message;
  EXPECT_EQ(data->results_root, root_.string());
  ASSERT_EQ(data->cases.size(), 1u);
  ASSERT_EQ(data->ab_runs.size(), 1u);
  ASSERT_EQ(data->trends["chat-tiny"].size(), 6u);
  EXPECT_TRUE(data->notes.empty()) << join(data->notes, "\n");

  const std::string html = render_html_report(*data);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  // No network: nothing is loaded from anywhere.
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr(" src=")));
  // Text from the run is escaped, never markup.
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(&#39;x&#39;)"));
  // The parts: verdict with evidence, figure against golden, A/B distributions, memory, trend with its step.
  EXPECT_THAT(html, HasSubstr("llama_context: flash_attn = enabled"));
  EXPECT_THAT(html, HasSubstr("data-plot=\"figure\""));
  EXPECT_THAT(html, HasSubstr("data-plot=\"ab\""));
  EXPECT_THAT(html, HasSubstr("data-plot=\"memory\""));
  EXPECT_THAT(html, HasSubstr("data-plot=\"trend\""));
  EXPECT_THAT(html, HasSubstr("b200: +20.0%"));
  EXPECT_THAT(html, HasSubstr("class=\"step worse\""));
  // 8 samples of the A/B arms, 4 of the run.
  const std::regex ab_dot("<circle class=\"dot (on|off)\"");
  EXPECT_EQ(std::distance(std::sregex_iterator(html.begin(), html.end(), ab_dot), std::sregex_iterator()), 8);
  EXPECT_EQ(render_html_report(*data), html) << "deterministic for the same data";
}

TEST_F(ReportTree, LevelledFiguresAndTheWorkloadLines) {
  RunResult r = sample_run("b100", 1.0);
  r.figures[0].name = "c1.ttft_ms_p95";
  FigureResult c4 = r.figures[0];
  c4.name = "c4.ttft_ms_p95";
  r.figures.push_back(c4);
  r.workload = {{"prompt_tokens", "200 per request, counted by llama-server POST /tokenize"}, {"goodput.c4", "7 of 8 requests met every target (87.5%)"}};
  const std::string dir = add_run("20261130T000001Z-1", r);
  auto back = load_result_json(dir + "/result.json");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->figures.size(), 2u);
  EXPECT_EQ(back->figures[1].name, "c4.ttft_ms_p95");
  EXPECT_TRUE(back->figures[1].gate);
  auto data = load_report_data((root_ / "fp1").string());
  ASSERT_TRUE(data) << data.error().message;
  const std::string html = render_html_report(*data);
  EXPECT_THAT(html, HasSubstr("<b>c1.ttft_ms_p95</b>"));
  EXPECT_THAT(html, HasSubstr("<b>c4.ttft_ms_p95</b>"));
  EXPECT_THAT(html, HasSubstr("<h3>Workload</h3>"));
  EXPECT_THAT(html, HasSubstr("<td>goodput.c4</td><td>7 of 8 requests met every target (87.5%)</td>"));
  const std::string text = result_to_text(r);
  EXPECT_THAT(text, HasSubstr("figure.c4.ttft_ms_p95.p50 = "));
  EXPECT_THAT(text, HasSubstr("workload.goodput.c4 = 7 of 8 requests met every target (87.5%)\n"));
}

TEST_F(ReportTree, ErrorsAndNotesNameTheFile) {
  auto none = load_report_data((root_ / "missing").string());
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("missing"));
  fs::create_directories(root_ / "empty");
  auto empty = load_report_data((root_ / "empty").string());
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message, HasSubstr("no result.json, no ab.json and no matrix.json"));

  const std::string dir = add_run("20261130T000001Z-1", sample_run("b1", 1));
  add_run("20261130T000002Z-1", sample_run("b1", 1));
  fs::remove(fs::path(dir) / "result.json");  // a run in the history whose files are gone
  auto data = load_report_data((root_ / "fp1" / "chat-tiny").string());
  ASSERT_TRUE(data) << data.error().message;
  EXPECT_EQ(data->trends["chat-tiny"].size(), 1u);
  ASSERT_EQ(data->notes.size(), 1u);
  EXPECT_THAT(data->notes[0], HasSubstr("no readable result.json"));
  EXPECT_THAT(render_html_report(*data), HasSubstr("no readable result.json"));
}

TEST_F(ReportTree, RendersASupportMatrix) {
  MatrixRun m;
  m.case_name = "chat-tiny";
  m.runtime = "llama-server";
  m.runtime_version = "0.7.0 (build 11669, commit Debian)";
  m.fingerprint_id = "fp1";
  m.expect_backend = "CUDA0";
  m.axes = {"kv: f16, q8_0/f16", "flag: on, off"};
  m.exit_code = 0;
  MatrixRow on;
  on.kv_k = "q8_0";
  on.kv_v = "f16";
  on.flag_value = "on";
  on.context = 2048;
  on.head_size = 48;
  on.outcome = RowOutcome::Ran;
  on.verdict = "not active";
  on.silent_fallback = true;
  on.fused_op = "FLASH_ATTN";
  on.fused_nodes = {{"CPU", 38}};
  on.cause = "head size 48: <no kernel>";
  on.server_prompt_tps = 700;
  on.server_vs_off = 0.35;
  MatrixRow refused = on;
  refused.flag_on = false;
  refused.flag_value = "off";
  refused.outcome = RowOutcome::Refused;
  refused.verdict.clear();
  refused.fused_nodes.clear();
  refused.detail = "quantized V cache requires flash_attn to be enabled";
  m.rows = {on, refused};
  const fs::path dir = root_ / "fp1" / "chat-tiny" / "matrix-20261130T000009Z-3";
  fs::create_directories(dir);
  ASSERT_TRUE(write_matrix_files(dir.string(), m));

  auto data = load_report_data((root_ / "fp1").string());
  ASSERT_TRUE(data) << data.error().message;
  ASSERT_EQ(data->matrix_runs.size(), 1u);
  const std::string html = render_html_report(*data);
  EXPECT_THAT(html, HasSubstr("Support matrix: chat-tiny"));
  EXPECT_THAT(html, HasSubstr("<code>q8_0/f16</code>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"badge bad\">not active (silent fallback)</span>"));
  EXPECT_THAT(html, HasSubstr("FLASH_ATTN CPU 38"));
  EXPECT_THAT(html, HasSubstr(">0.35x<"));
  EXPECT_THAT(html, HasSubstr("<span class=\"badge warn\">refused by the runtime</span>"));
  EXPECT_THAT(html, HasSubstr("quantized V cache requires flash_attn to be enabled"));
  EXPECT_THAT(html, HasSubstr("head size 48: &lt;no kernel&gt;"));  // escaped
  EXPECT_THAT(html, HasSubstr("1 matrix run(s)"));
  // The matrix folder alone is a report too (what `flashproof matrix` writes beside matrix.json).
  auto alone = load_report_data(dir.string());
  ASSERT_TRUE(alone) << alone.error().message;
  EXPECT_EQ(alone->matrix_runs.size(), 1u);
}

}  // namespace
}  // namespace fp
