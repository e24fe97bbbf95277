#include "case/prompt_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// This repository's own suite (flashproof-suite.json at its root: prompts in fixtures/prompts).
Suite repo_suite() {
  auto s = load_suite(FLASHPROOF_SOURCE_DIR);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? *s : Suite{};
}

TEST(PromptSet, ShippedSetsHaveStableIdsAndTurns) {
  auto chat = load_prompt_set(repo_suite(), "chat");
  ASSERT_TRUE(chat.ok()) << chat.error().message;
  ASSERT_EQ(chat->size(), 3u);
  EXPECT_EQ((*chat)[0].id, "followup");  // sorted by id
  EXPECT_EQ((*chat)[0].messages.size(), 4u);
  EXPECT_EQ((*chat)[0].messages[2].role, "assistant");
  EXPECT_EQ((*chat)[2].id, "summary");
  EXPECT_EQ((*chat)[2].messages.size(), 1u);
  EXPECT_EQ((*chat)[2].messages[0].role, "user");
  for (const char* set : {"code", "extraction", "batch"}) {
    auto p = load_prompt_set(repo_suite(), set);
    ASSERT_TRUE(p.ok()) << set << ": " << p.error().message;
    EXPECT_GE(p->size(), 2u) << set;
  }
}

TEST(PromptSet, LongTextIsDeterministicAndCutAtWords) {
  const std::string doc = "alpha beta\ngamma  delta";
  std::string a = build_long_text(doc, 40);
  EXPECT_EQ(a, build_long_text(doc, 40));
  EXPECT_LE(a.size(), 40u);
  EXPECT_EQ(a, "alpha beta gamma delta alpha beta gamma");
  EXPECT_EQ(build_long_text(doc, 3), "");
}

TEST(PromptSet, LongPromptPrecedesTheLastUserMessage) {
  LongPrompt lp{"fixtures/prompts/documents/operations_manual.txt", 3000};
  auto p = load_prompt_set(repo_suite(), "code", lp);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const std::string& text = p->front().messages.back().content;
  EXPECT_GT(text.size(), 3000u);
  EXPECT_EQ(text.rfind("Operations manual", 0), 0u);
  auto again = load_prompt_set(repo_suite(), "code", lp);
  EXPECT_EQ(again->front().as_text(), p->front().as_text());
}

TEST(PromptSet, BadTurnHeaderNamesFileAndLine) {
  fs::path root = fs::temp_directory_path() / ("fp-prompt-test-" + std::to_string(::getpid()));
  fs::create_directories(root / "prompts/s");
  std::ofstream(root / "prompts/s/x.txt") << "## user\nhi\n## robot\nno\n";
  auto suite = load_suite(root.string());
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  auto p = load_prompt_set(*suite, "s");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("x.txt:3"));
  EXPECT_THAT(p.error().message, HasSubstr("## robot"));
  fs::remove_all(root);
}

// A suite in a scratch folder with one prompt set "s" holding `files` (name -> bytes).
class PromptFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("fp-prompt-folder-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "prompts/s");
    std::ofstream(root_ / "prompts/s/a.txt") << "hello\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string set_file(const std::string& name) const { return (root_ / "prompts/s" / name).string(); }
  Result<std::vector<Prompt>> load(const PromptLimit& limit = PromptLimit{}) {
    auto suite = load_suite(root_.string());
    EXPECT_TRUE(suite.ok()) << suite.error().message;
    return load_prompt_set(*suite, "s", std::nullopt, limit);
  }
  fs::path root_;
};

TEST_F(PromptFolder, NotUtf8IsRefusedWithTheFileAndTheByteOffset) {
  std::ofstream(set_file("b.txt"), std::ios::binary) << "hi \xff\xfe\n";
  auto p = load();
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr(set_file("b.txt") + ": byte offset 3 (0xFF) is not UTF-8"));
}

TEST_F(PromptFolder, SymlinkLoopDanglingLinkPipeAndFolderAreRefusedNamingThePath) {
  fs::create_symlink("c.txt", set_file("b.txt"));
  fs::create_symlink("b.txt", set_file("c.txt"));
  auto p = load();
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr(set_file("b.txt") + ": cannot read the prompt: Too many levels of symbolic links"));
  fs::remove(set_file("b.txt"));
  fs::remove(set_file("c.txt"));
  fs::create_symlink("gone.txt", set_file("b.txt"));
  EXPECT_THAT(load().error().message, HasSubstr(set_file("b.txt") + ": cannot read the prompt: No such file or directory"));
  fs::remove(set_file("b.txt"));
  ASSERT_EQ(::mkfifo(set_file("b.txt").c_str(), 0644), 0);
  EXPECT_THAT(load().error().message, HasSubstr(set_file("b.txt") + ": cannot read the prompt: a named pipe (FIFO), not a regular file"));
  fs::remove(set_file("b.txt"));
  fs::create_directory(set_file("b.txt"));
  EXPECT_THAT(load().error().message, HasSubstr(set_file("b.txt") + ": cannot read the prompt: a folder, not a regular file"));
  fs::remove(set_file("b.txt"));
  std::ofstream(set_file("notes.md")) << "not a prompt";  // only <id>.txt files are prompts
  EXPECT_TRUE(load().ok());
}

TEST_F(PromptFolder, APromptOverTheLimitIsRefusedWithItsSizeAndTheLimit) {
  std::ofstream(set_file("b.txt")) << std::string(5000, 'x');
  const PromptLimit limit = prompt_limit(100, 16, "the longest token of the model's vocabulary");
  EXPECT_EQ(limit.bytes, 1600u);
  auto p = load(limit);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message,
              HasSubstr(set_file("b.txt") + ": 5000 bytes, more than the 1600 a prompt can hold (shape.context 100 tokens x 16 bytes "
                                            "per token at most (the longest token of the model's vocabulary))"));
  EXPECT_TRUE(load(prompt_limit(400, 16, "v")).ok());
}

}  // namespace
}  // namespace fp
