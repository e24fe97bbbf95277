#include "golden/answers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(AnswerCompare, IdenticalHasNoDiff) {
  AnswerComparison c = compare_answer("q1", "Paris.\n", "Paris.\n");
  EXPECT_TRUE(c.identical);
  EXPECT_EQ(c.diff, "");
}

TEST(AnswerCompare, UnifiedDiffExact) {
  std::string ref = "Capitals:\nFrance: Paris\nItaly: Rome\nSpain: Madrid\nPortugal: Lisbon\n"
                    "Greece: Athens\nAustria: Vienna\nIreland: Dublin\n";
  std::string run = "Capitals:\nFrance: Paris\nItaly: Rome\nSpain: Barcelona\nPortugal: Lisbon\n"
                    "Greece: Athens\nAustria: Vienna\nIreland: Dublin\nDone.\n";
  AnswerComparison c = compare_answer("capitals-3", ref, run);
  EXPECT_FALSE(c.identical);
  EXPECT_EQ(c.diff,
            "--- reference/capitals-3\n"
            "+++ run/capitals-3\n"
            "@@ -1,8 +1,9 @@\n"
            " Capitals:\n"
            " France: Paris\n"
            " Italy: Rome\n"
            "-Spain: Madrid\n"
            "+Spain: Barcelona\n"
            " Portugal: Lisbon\n"
            " Greece: Athens\n"
            " Austria: Vienna\n"
            " Ireland: Dublin\n"
            "+Done.\n"
            "first difference at character 44 (line 4, column 8): reference has \"Madrid\\nPortugal: Lisbon\\n\", "
            "run has \"Barcelona\\nPortugal: Lisb\"\n");
}

TEST(AnswerCompare, SeparateHunks) {
  std::string ref, run;
  for (int i = 1; i <= 20; ++i) {
    ref += "line " + std::to_string(i) + "\n";
    run += (i == 2 ? "LINE 2" : i == 18 ? "LINE 18" : "line " + std::to_string(i)) + "\n";
  }
  AnswerComparison c = compare_answer("p", ref, run);
  EXPECT_EQ(c.diff,
            "--- reference/p\n+++ run/p\n"
            "@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE 2\n line 3\n line 4\n line 5\n"
            "@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+LINE 18\n line 19\n line 20\n"
            "first difference at character 8 (line 2, column 1): reference has \"line 2\\nline 3\\nline 4\\nlin\", "
            "run has \"LINE 2\\nline 3\\nline 4\\nlin\"\n");
}

TEST(AnswerCompare, LongGarbageLineIsWrappedForTheDiff) {
  // One line of random-weight output: the change in the middle shows as one changed piece.
  std::string ref = "zq oblique faint tumbril 7x sprocketed marrow henge ulu vintner quasar glib "
                    "orrery sennet kvetch 9 fen plinth bardic ague whelk droll tarn sallow ichor "
                    "lumen vex ort skein brume fjeld";
  std::string run = ref;
  run.replace(run.find("bardic"), 6, "BARDIC");
  AnswerComparison c = compare_answer("garbage", ref, run, 40);
  EXPECT_EQ(c.diff,
            "--- reference/garbage\n+++ run/garbage\n"
            "@@ -1,5 +1,5 @@\n"
            " zq oblique faint tumbril 7x sprocketed \\\n"
            " marrow henge ulu vintner quasar glib \\\n"
            " orrery sennet kvetch 9 fen plinth \\\n"
            "-bardic ague whelk droll tarn sallow \\\n"
            "+BARDIC ague whelk droll tarn sallow \\\n"
            " ichor lumen vex ort skein brume fjeld\n"
            "first difference at character 111 (line 1, column 111): reference has \"bardic ague whelk droll \", "
            "run has \"BARDIC ague whelk droll \"\n");
}

TEST(AnswerCompare, DifferenceHiddenByDisplayIsStillReported) {
  AnswerComparison c = compare_answer("nl", "Paris", "Paris\n");
  EXPECT_FALSE(c.identical);
  EXPECT_EQ(c.diff,
            "--- reference/nl\n+++ run/nl\n"
            "first difference at character 6 (line 1, column 6): reference has end of text, run has \"\\n\"\n");
}

TEST(AnswerCompare, EmptySideNumberedLikeGnuDiff) {
  EXPECT_EQ(compare_answer("e", "", "abc\ndef\n").diff,
            "--- reference/e\n+++ run/e\n@@ -0,0 +1,2 @@\n+abc\n+def\n"
            "first difference at character 1 (line 1, column 1): reference has end of text, run has \"abc\\ndef\\n\"\n");
  EXPECT_EQ(compare_answer("e", "abc\n", "").diff,
            "--- reference/e\n+++ run/e\n@@ -1,1 +0,0 @@\n-abc\n"
            "first difference at character 1 (line 1, column 1): reference has \"abc\\n\", run has end of text\n");
}

bool valid_utf8(const std::string& s) {
  // The quote must round-trip through JSON (nlohmann refuses invalid UTF-8: the abort of issue 47).
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// Issue 47: an answer turning "é" into "è" differs at the second byte of the character (C3 A9 vs C3
// A8); the quote began there, with a lone continuation byte, and run and ab aborted (exit 134).
TEST(AnswerCompare, DiffersInsideAMultiByteCharacter) {
  AnswerComparison c = compare_answer("fr", "caf\xc3\xa9 cr\xc3\xa8me\n", "caf\xc3\xa8 cr\xc3\xa8me\n");
  EXPECT_THAT(c.diff, HasSubstr("first difference at character 4 (line 1, column 4): reference has \"\xc3\xa9 cr\xc3\xa8me\\n\", "
                                "run has \"\xc3\xa8 cr\xc3\xa8me\\n\"\n"));
  EXPECT_TRUE(valid_utf8(c.diff)) << c.diff;
  // Characters, not bytes, before the difference: "ééé" then x/y is character 4, byte 7.
  EXPECT_THAT(compare_answer("c", "\xc3\xa9\xc3\xa9\xc3\xa9x", "\xc3\xa9\xc3\xa9\xc3\xa9y").diff,
              HasSubstr("first difference at character 4, byte 7 (line 1, column 4)"));
}

// A 24-byte window of the reference ended inside "é": 24 characters now, whole.
TEST(AnswerCompare, QuotesWholeCharactersAtTheWindowsEnd) {
  const std::string ref = "abcdefghij" + std::string(23, 'Z') + "\xc3\xa9" + "tail";
  AnswerComparison c = compare_answer("w", ref, "abcdefghijtail");
  EXPECT_TRUE(valid_utf8(c.diff)) << c.diff;
  EXPECT_THAT(c.diff, HasSubstr("first difference at character 11 (line 1, column 11): reference has \"" + std::string(23, 'Z') +
                                "\xc3\xa9\", run has \"tail\"\n"));
  // Bytes that are not UTF-8 at all are shown as U+FFFD and named.
  AnswerComparison bad = compare_answer("b", "ab\xff\xfe", "abc");
  EXPECT_TRUE(valid_utf8(bad.diff)) << bad.diff;
  EXPECT_THAT(bad.diff, HasSubstr("reference has \"\xef\xbf\xbd\xef\xbf\xbd\" (bytes that are not UTF-8, shown as U+FFFD: 0xFF 0xFE)"));
}

TEST(AnswerWrap, Pieces) {
  EXPECT_EQ(wrap_for_diff("", 10), std::vector<std::string>{});
  EXPECT_EQ(wrap_for_diff("a\n\nb\n", 10), (std::vector<std::string>{"a", "", "b"}));
  // No space: hard cut at the width, marked with a backslash.
  EXPECT_EQ(wrap_for_diff("abcdefghijklmnopqrstuvwxy", 10),
            (std::vector<std::string>{"abcdefghij\\", "klmnopqrst\\", "uvwxy"}));
  // Characters, not bytes: "é" (2 bytes) is the tenth character of the first piece.
  EXPECT_EQ(wrap_for_diff("abcdefghi\xc3\xa9klmno", 10),
            (std::vector<std::string>{"abcdefghi\xc3\xa9\\", "klmno"}));
  // A byte that is not UTF-8 is one character, shown as U+FFFD: every piece is valid UTF-8.
  EXPECT_EQ(wrap_for_diff("ab\xff" "cd", 10), (std::vector<std::string>{"ab\xef\xbf\xbd" "cd"}));
  // At the last space within the width; the space stays on the left.
  EXPECT_EQ(wrap_for_diff("one two three four", 10), (std::vector<std::string>{"one two \\", "three four"}));
  // A space too early in the piece (before width / 4) is not worth a short piece: hard cut.
  EXPECT_EQ(wrap_for_diff("a bcdefghijklm", 10), (std::vector<std::string>{"a bcdefghi\\", "jklm"}));
}

TEST(AnswerFiles, PromptIdsCannotEscapeTheFolder) {
  EXPECT_TRUE(validate_prompt_id("chat-01.long_ctx").ok());
  EXPECT_FALSE(validate_prompt_id("../etc/passwd").ok());
  EXPECT_FALSE(validate_prompt_id(".hidden").ok());
  EXPECT_FALSE(validate_prompt_id("a/b").ok());
  EXPECT_FALSE(validate_prompt_id("").ok());
}

class AnswerFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("fp_answers_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (HasFailure())
      std::cerr << "test files kept in " << dir_ << "\n";
    else
      fs::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(AnswerFilesTest, PlanThenSave) {
  ASSERT_TRUE(save_reference_answers(dir_, {{"q1", "old answer\n"}, {"q3", "same\n"}}).ok());
  EXPECT_EQ(*load_reference_answer(dir_, "q1"), "old answer\n");

  std::map<std::string, std::string> run = {{"q1", "new answer\n"}, {"q2", "brand new"}, {"q3", "same\n"}};
  auto plan = plan_answer_changes(dir_, run);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ((*plan)[0].prompt_id, "q1");
  EXPECT_EQ((*plan)[0].kind, AnswerChangeKind::changed);
  EXPECT_EQ((*plan)[0].diff,
            "--- reference/q1\n+++ run/q1\n@@ -1,1 +1,1 @@\n-old answer\n+new answer\n"
            "first difference at character 1 (line 1, column 1): reference has \"old answer\\n\", run has \"new answer\\n\"\n");
  EXPECT_EQ((*plan)[1].kind, AnswerChangeKind::added);
  EXPECT_EQ((*plan)[2].kind, AnswerChangeKind::unchanged);
  // Planning wrote nothing.
  EXPECT_EQ(*load_reference_answer(dir_, "q1"), "old answer\n");
  EXPECT_FALSE(fs::exists(answer_path(dir_, "q2")));

  struct stat st_before {};
  ASSERT_EQ(::stat(answer_path(dir_, "q3").c_str(), &st_before), 0);
  auto done = save_reference_answers(dir_, run);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->size(), 3u);
  EXPECT_EQ(*load_reference_answer(dir_, "q1"), "new answer\n");
  EXPECT_EQ(*load_reference_answer(dir_, "q2"), "brand new");  // exact bytes, no newline added
  struct stat st_after {};
  ASSERT_EQ(::stat(answer_path(dir_, "q3").c_str(), &st_after), 0);
  EXPECT_EQ(st_before.st_ino, st_after.st_ino) << "unchanged answer was rewritten";
  auto again = plan_answer_changes(dir_, run);
  for (const auto& change : *again) EXPECT_EQ(change.kind, AnswerChangeKind::unchanged) << change.prompt_id;
}

// Issue 47: a reference answer replaced by a folder read as an empty answer.
TEST_F(AnswerFilesTest, AFolderIsNotAnAnswer) {
  fs::create_directories(answer_path(dir_, "q1"));
  auto r = load_reference_answer(dir_, "q1");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr(answer_path(dir_, "q1") + ": a folder, not a reference answer"));
  auto plan = plan_answer_changes(dir_, {{"q1", "x"}});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.error().message, HasSubstr("a folder, not a reference answer"));
}

TEST_F(AnswerFilesTest, MissingReferenceIsAnErrorNamingThePath) {
  auto r = load_reference_answer(dir_, "nope");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(answer_path(dir_, "nope")), std::string::npos) << r.error().message;
  EXPECT_FALSE(plan_answer_changes(dir_, {{"../x", "y"}}).ok());
}

}  // namespace
}  // namespace fp
