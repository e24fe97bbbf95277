// `flashproof history --changes` in-process, on the recorded history fixtures/history/runtime-step
// (fixtures/history/make_fixture.py) and on small histories written here.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const std::string kRecorded = FLASHPROOF_SOURCE_DIR "/fixtures/history/runtime-step";

struct Ran {
  int code;
  std::string out, err;
};

// args after the subcommand's name, as main passes them.
int history(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return history_command(static_cast<int>(argv.size()), argv.data());
}

Ran run_history(std::vector<std::string> args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = history(std::move(args));
  return {code, ::testing::internal::GetCapturedStdout(), ::testing::internal::GetCapturedStderr()};
}

std::vector<std::string> lines_with(const std::string& text, const std::string& word) {
  std::vector<std::string> out;
  for (const auto& line : split_lines(text))
    if (line.find(word) != std::string::npos) out.push_back(line);
  return out;
}

TEST(HistoryCommand, ChangesNameTheNightTheFigureAndTheFingerprintFields) {
  Ran r = run_history({"--changes", "--results", kRecorded});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = split_lines(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_NE(lines[0].find("case chat-tiny-short: "), std::string::npos) << r.out;
  EXPECT_NE(lines[0].find(" in 20 runs"), std::string::npos) << r.out;
  EXPECT_NE(lines[1].find("(gate)"), std::string::npos) << "gated figures first:\n" << r.out;

  const auto ttft = lines_with(r.out, " ttft_ms ");
  ASSERT_EQ(ttft.size(), 1u) << r.out;
  EXPECT_EQ(ttft[0].rfind("  2026-11-12T", 0), 0u) << ttft[0];
  EXPECT_NE(ttft[0].find("worse"), std::string::npos) << ttft[0];
  EXPECT_NE(ttft[0].find("p=0.005"), std::string::npos) << ttft[0];
  EXPECT_NE(ttft[0].find("runtime_build: 11600 -> 11669"), std::string::npos) << ttft[0];
  for (const char* steady : {"tpot_ms", "itl_ms", "decode_tokens_per_s", "client_minus_server_prompt_ms"})
    EXPECT_TRUE(lines_with(r.out, steady).empty()) << steady << " does not step:\n" << r.out;
}

TEST(HistoryCommand, SaysSoWhenThereIsNoChangePoint) {
  const std::string root = ::testing::TempDir() + "fp_history_command_none";
  fs::remove_all(root);
  fs::create_directories(root);
  std::string tsv;
  for (int i = 1; i <= 5; ++i) {
    const std::string dir = "fp/c/run" + std::to_string(i);
    fs::create_directories(root + "/" + dir);
    ASSERT_TRUE(write_file_atomic(root + "/" + dir + "/result.json",
                                  R"({"fingerprint": "fp", "figures": {"ttft_ms": {"p50": 10, "gate": true}}})").ok());
    tsv += "2026-12-0" + std::to_string(i) + "T00:00:00Z\tfp\tc\tpass\t" + dir + "\n";
  }
  tsv += "2026-12-06T00:00:00Z\tfp\tc\tincomplete\tfp/c/gone\n";
  ASSERT_TRUE(write_file_atomic(root + "/history.tsv", tsv).ok());

  Ran r = run_history({"--changes", "--results", root, "c", "nope"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("case c: no change points in 5 runs (1 skipped); a step shows once 3 runs either side of it are in\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  skipped " + root + "/fp/c/gone/result.json: cannot open"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("case nope: no runs in " + root + "/history.tsv\n"), std::string::npos) << r.out;
}

TEST(HistoryCommand, UnreadableHistoryIsExitTwo) {
  const std::string root = ::testing::TempDir() + "fp_history_command_bad";
  fs::remove_all(root);
  fs::create_directories(root);
  ASSERT_TRUE(write_file_atomic(root + "/history.tsv", "one field only\n").ok());
  Ran r = run_history({"--changes", "--results", root});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(root + "/history.tsv:1: malformed history line"), std::string::npos) << r.err;
}

TEST(HistoryCommandDeathTest, ChangesWithALimitIsAUsageError) {
  EXPECT_EXIT(history({"--changes", "-n", "3"}), ::testing::ExitedWithCode(64), "-n limits the listing");
  EXPECT_EXIT(history({"--since", "x"}), ::testing::ExitedWithCode(64), "unknown option \"--since\"");
}

}  // namespace
}  // namespace fp
