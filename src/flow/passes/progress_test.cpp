#include "flow/passes/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace fp {
namespace {

TEST(ProgressStyle, TerminalOnlyOnATtyOutsideCi) {
  EXPECT_EQ(choose_progress_style(false, true, nullptr, nullptr), ProgressStyle::Terminal);
  EXPECT_EQ(choose_progress_style(false, true, "true", nullptr), ProgressStyle::Lines);
  EXPECT_EQ(choose_progress_style(false, true, "1", nullptr), ProgressStyle::Lines);
  EXPECT_EQ(choose_progress_style(false, true, "false", nullptr), ProgressStyle::Terminal);
  EXPECT_EQ(choose_progress_style(false, false, nullptr, nullptr), ProgressStyle::Lines);
  EXPECT_EQ(choose_progress_style(true, true, nullptr, nullptr), ProgressStyle::Quiet);
}

TEST(ProgressStyle, OverrideWinsUnlessQuiet) {
  EXPECT_EQ(choose_progress_style(false, false, "1", "terminal"), ProgressStyle::Terminal);
  EXPECT_EQ(choose_progress_style(false, true, nullptr, "lines"), ProgressStyle::Lines);
  EXPECT_EQ(choose_progress_style(false, true, nullptr, "quiet"), ProgressStyle::Quiet);
  EXPECT_EQ(choose_progress_style(false, true, nullptr, "bogus"), ProgressStyle::Terminal);
  EXPECT_EQ(choose_progress_style(true, true, nullptr, "terminal"), ProgressStyle::Quiet);
}

TEST(Progress, LinesArePlainOnePerPhase) {
  std::ostringstream out;
  {
    Progress p(ProgressStyle::Lines, out);
    p.phase("chat", "evidence pass");
    p.phase("chat", "timed runs");
    p.repetition("round", 1, 3);  // too soon for a line of its own
    p.repetition("round", 3, 3);  // the last round gets one
  }
  const std::string s = out.str();
  EXPECT_EQ(s.find('\r'), std::string::npos);
  EXPECT_EQ(s.find('\033'), std::string::npos);
  EXPECT_NE(s.find("[chat] evidence pass ("), std::string::npos) << s;
  EXPECT_NE(s.find("[chat] timed runs: round 3/3 ("), std::string::npos) << s;
  EXPECT_EQ(s.find("round 1/3"), std::string::npos) << s;
}

TEST(Progress, TerminalRewritesOneLineAndEndsIt) {
  std::ostringstream out;
  {
    Progress p(ProgressStyle::Terminal, out, 40);
    p.phase("chat-tiny-short", "timed runs");
    p.repetition("round", 2, 5);
    EXPECT_NE(p.status_text().find("round 2/5"), std::string::npos);
  }
  const std::string s = out.str();
  EXPECT_NE(s.find("\r\033[K[chat-tiny-short] timed runs"), std::string::npos) << s;
  EXPECT_EQ(s.back(), '\n');
  for (size_t start = 0; (start = s.find("\r\033[K", start)) != std::string::npos; start += 4) {
    size_t end = s.find_first_of("\r\n", start + 4);
    EXPECT_LE(end - start - 4, 39u) << "a status line wider than the terminal";
  }
}

TEST(Progress, QuietWritesNothingAndCurrentIsScoped) {
  std::ostringstream out;
  Progress p(ProgressStyle::Quiet, out);
  EXPECT_EQ(current_progress(), nullptr);
  {
    ScopedProgress scope(&p);
    EXPECT_EQ(current_progress(), &p);
    p.phase("x", "y");
    progress_repetition("round", 1, 2);
  }
  EXPECT_EQ(current_progress(), nullptr);
  progress_repetition("round", 1, 2);  // no current progress: a no-op
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace fp
