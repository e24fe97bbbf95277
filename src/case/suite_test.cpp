#include "case/suite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("fp-suite-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "cases" / "nested");
  }
  void TearDown() override { fs::remove_all(root_); }
  void marker(const std::string& text) { std::ofstream(root_ / kSuiteMarker) << text; }
  fs::path root_;
};

TEST_F(SuiteTest, MarkerNamesTheFolders) {
  marker(suite_marker_text("fixtures/prompts"));
  auto s = load_suite(root_.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->root, root_.string());
  EXPECT_EQ(s->marker, (root_ / kSuiteMarker).string());
  EXPECT_EQ(s->cases, (root_ / "cases").string());
  EXPECT_EQ(s->prompts, (root_ / "fixtures/prompts").string());
  EXPECT_EQ(s->golden, (root_ / "golden").string());
  EXPECT_EQ(s->results, (root_ / "results").string());
  // The suite's own prompt sets first, then those flashproof ships.
  ASSERT_EQ(s->prompt_dirs().size(), 2u);
  EXPECT_EQ(s->prompt_dirs()[0], s->prompts);
  EXPECT_THAT(s->prompt_dirs()[1], HasSubstr("share/flashproof/prompts"));
}

TEST_F(SuiteTest, FolderWithoutAMarkerHasTheDefaultLayout) {
  auto s = load_suite(root_.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->marker, "");
  EXPECT_EQ(s->prompts, (root_ / "prompts").string());
}

TEST_F(SuiteTest, BadMarkerNamesTheFileTheFieldAndTheValue) {
  marker(R"({"golden": "../elsewhere"})");
  auto s = load_suite(root_.string());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr(kSuiteMarker));
  EXPECT_THAT(s.error().message, HasSubstr("golden"));
  EXPECT_THAT(s.error().message, HasSubstr("../elsewhere"));
  EXPECT_THAT(s.error().message, HasSubstr("a folder inside the suite"));
  marker(R"({"golden": "golden", "gold": "x"})");
  s = load_suite(root_.string());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("gold"));
  marker("{not json");
  s = load_suite(root_.string());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr(kSuiteMarker));
}

TEST_F(SuiteTest, FoundByWalkingUpFromTheWorkingDirectory) {
  marker(suite_marker_text());
  auto s = find_suite("", (root_ / "cases" / "nested").string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->root, root_.string());
}

TEST_F(SuiteTest, RootOptionWinsOverTheWorkingDirectory) {
  marker(suite_marker_text());
  const fs::path other = root_ / "cases" / "nested";
  std::ofstream(other / kSuiteMarker) << suite_marker_text();
  auto s = find_suite(root_.string(), other.string());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->root, root_.string());
  auto nearest = find_suite("", other.string());
  ASSERT_TRUE(nearest.ok());
  EXPECT_EQ(nearest->root, other.string());
}

TEST_F(SuiteTest, CaseFileLeadsToItsSuiteWhenTheWorkingDirectoryHasNone) {
  marker(suite_marker_text());
  const fs::path elsewhere = fs::temp_directory_path() / ("fp-suite-none-" + std::to_string(::getpid()));
  fs::create_directories(elsewhere);
  auto s = find_suite("", elsewhere.string(), {(root_ / "cases" / "c.json").string()});
  fs::remove_all(elsewhere);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->root, root_.string());
}

TEST_F(SuiteTest, NoSuiteSaysWhereItLookedAndWhatToDo) {
  auto s = find_suite("", (root_ / "cases").string());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr((root_ / "cases").string()));
  EXPECT_THAT(s.error().message, HasSubstr("--root DIR"));
  EXPECT_THAT(s.error().message, HasSubstr("flashproof init DIR"));
}

TEST(ShippedSuite, ThisRepositoryIsASuite) {
  auto s = find_suite("", FLASHPROOF_SOURCE_DIR "/src/case");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(fs::path(s->root), fs::path(FLASHPROOF_SOURCE_DIR).lexically_normal());
  EXPECT_EQ(s->prompts, (fs::path(FLASHPROOF_SOURCE_DIR) / "fixtures/prompts").lexically_normal().string());
}

}  // namespace
}  // namespace fp
