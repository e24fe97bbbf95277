#include "case/prompt_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fp
