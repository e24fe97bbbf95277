#include "history/history_changes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// fixtures/history/make_fixture.py: 20 nights of chat-tiny-short; at night 12 (2026-11-12) the
// llama-server build changes and prompt processing gets 15% slower; decode does not change.
const std::string kRecorded = FLASHPROOF_SOURCE_DIR "/fixtures/history/runtime-step";
const std::string kCase = "chat-tiny-short";

std::vector<FigureChange> changes_of(const std::vector<FigureChange>& all, const std::string& figure) {
  std::vector<FigureChange> out;
  for (const auto& c : all)
    if (c.figure == figure) out.push_back(c);
  return out;
}

// The fingerprint_detail keys (but "id") whose values differ between two runs.
std::vector<std::string> changed_fields(const NightRun& before, const NightRun& after) {
  std::vector<std::string> out;
  for (const auto& [key, value] : after.fingerprint.items())
    if (key != "id" && (!before.fingerprint.contains(key) || before.fingerprint[key] != value)) out.push_back(key);
  return out;
}

CaseNights recorded_nights(const std::string& root) {
  auto history = load_history(root);
  EXPECT_TRUE(history.ok()) << history.error().message;
  return history ? load_case_nights(root, *history, kCase) : CaseNights{};
}

TEST(HistoryChanges, FindsTheRuntimeStepInTheRecordedHistory) {
  const CaseNights nights = recorded_nights(kRecorded);
  ASSERT_EQ(nights.runs.size(), 20u);
  EXPECT_TRUE(nights.skipped.empty());
  const auto all = find_figure_changes(nights);
  ASSERT_FALSE(all.empty());
  EXPECT_TRUE(all.front().gate) << "gated figures first, got " << all.front().figure;

  const auto ttft = changes_of(all, "ttft_ms");
  ASSERT_EQ(ttft.size(), 1u);
  const NightRun& at = nights.runs[ttft[0].run_at];
  const NightRun& before = nights.runs[ttft[0].run_before];
  EXPECT_EQ(at.entry.finished_utc.substr(0, 10), "2026-11-12");
  EXPECT_EQ(before.entry.finished_utc.substr(0, 10), "2026-11-11");
  EXPECT_NEAR(ttft[0].point.relative_change, 0.15, 0.04);
  EXPECT_LE(ttft[0].point.p_value, 0.01);
  const auto fields = changed_fields(before, at);
  EXPECT_NE(std::find(fields.begin(), fields.end(), "runtime_build"), fields.end()) << join(fields, ", ");
  EXPECT_NE(before.fingerprint_id, at.fingerprint_id);

  for (const char* steady : {"tpot_ms", "itl_ms", "decode_tokens_per_s", "client_minus_server_prompt_ms"})
    EXPECT_TRUE(changes_of(all, steady).empty()) << steady << " does not step in the recording";
}

TEST(HistoryChanges, SkipsUnreadableRunsWithANote) {
  const std::string root = ::testing::TempDir() + "fp_history_changes_skip";
  fs::remove_all(root);
  fs::copy(kRecorded, root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  auto history = load_history(root);
  ASSERT_TRUE(history.ok()) << history.error().message;
  const auto runs = runs_of_case(*history, kCase);
  const std::string gone = run_dir_path(root, runs[2]) + "/result.json";
  const std::string torn = run_dir_path(root, runs[15]) + "/result.json";
  fs::remove(gone);
  ASSERT_TRUE(write_file_atomic(torn, "{\"case\": \"chat-tiny-short\", \"figures\": {\"ttft_ms\"").ok());

  const CaseNights nights = load_case_nights(root, *history, kCase);
  EXPECT_EQ(nights.runs.size(), 18u);
  ASSERT_EQ(nights.skipped.size(), 2u);
  EXPECT_NE(nights.skipped[0].find(gone + ": cannot open"), std::string::npos) << nights.skipped[0];
  EXPECT_NE(nights.skipped[1].find(torn + ": not a valid result file"), std::string::npos) << nights.skipped[1];
  const auto ttft = changes_of(find_figure_changes(nights), "ttft_ms");
  ASSERT_EQ(ttft.size(), 1u);
  EXPECT_EQ(nights.runs[ttft[0].run_at].entry.finished_utc.substr(0, 10), "2026-11-12");
}

// A results root with one run per value; a run's figures are given as name -> median.
std::string write_history(const std::string& name, const std::vector<std::vector<std::pair<std::string, double>>>& nights) {
  const std::string root = ::testing::TempDir() + "fp_history_changes_" + name;
  fs::remove_all(root);
  std::string tsv = "# finished_utc\tfingerprint\tcase\tstatus\trun_dir\n";
  for (size_t i = 0; i < nights.size(); ++i) {
    const std::string stamp = "2026-12-" + std::string(i + 1 < 10 ? "0" : "") + std::to_string(i + 1);
    const std::string dir = "fp/c/" + stamp;
    fs::create_directories(root + "/" + dir);
    nlohmann::ordered_json figures = nlohmann::ordered_json::object();
    for (const auto& [figure, median] : nights[i])
      figures[figure] = {{"p50", median}, {"gate", figure == "gated_ms"}, {"direction", "lower_is_better"}};
    nlohmann::ordered_json j = {{"case", "c"}, {"fingerprint", "fp"}, {"figures", figures}};
    EXPECT_TRUE(write_file_atomic(root + "/" + dir + "/result.json", j.dump()).ok());
    tsv += stamp + "T00:00:00Z\tfp\tc\tpass\t" + dir + "\n";
  }
  EXPECT_TRUE(write_file_atomic(root + "/history.tsv", tsv).ok());
  return root;
}

TEST(HistoryChanges, AFigureAbsentSomeNightsKeepsItsRunsApart) {
  std::vector<std::vector<std::pair<std::string, double>>> nights;
  for (int i = 0; i < 14; ++i) {
    std::vector<std::pair<std::string, double>> figures = {{"other_ms", 5.0 + 0.01 * (i % 3)}};
    if (i >= 2) figures.push_back({"gated_ms", (i < 8 ? 10.0 : 13.0) + 0.01 * (i % 2)});
    nights.push_back(figures);
  }
  const std::string root = write_history("absent", nights);
  auto history = load_history(root);
  ASSERT_TRUE(history.ok()) << history.error().message;
  const CaseNights n = load_case_nights(root, *history, "c");
  ASSERT_EQ(n.figures.size(), 2u);
  EXPECT_EQ(n.figures[0].name, "gated_ms");  // gated first, though the files name it second
  EXPECT_EQ(n.figures[0].values.size(), 12u);
  const auto changes = find_figure_changes(n);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].figure, "gated_ms");
  EXPECT_EQ(changes[0].point.index, 6u);  // in the figure's own series
  EXPECT_EQ(changes[0].run_at, 8u);       // in the case's runs
  EXPECT_EQ(changes[0].run_before, 7u);
  EXPECT_EQ(n.runs[changes[0].run_at].entry.finished_utc, "2026-12-09T00:00:00Z");
}

TEST(HistoryChanges, ARunWithoutFiguresIsSkipped) {
  const std::string root = write_history("nofigures", {{{"a_ms", 1}}, {}, {{"a_ms", 1}}});
  auto history = load_history(root);
  ASSERT_TRUE(history.ok());
  const CaseNights n = load_case_nights(root, *history, "c");
  EXPECT_EQ(n.runs.size(), 2u);
  ASSERT_EQ(n.skipped.size(), 1u);
  EXPECT_NE(n.skipped[0].find("no figure has a median"), std::string::npos) << n.skipped[0];
}

}  // namespace
}  // namespace fp
