#include "case/prompt_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace fp {
namespace {

using ::testing::HasSubstr;

// Counters that behave like real tokenizers in the ways that matter: a template around the turns,
// one token per character (the generated test models), or several characters per token with words
// of varying cost (BPE), so that a whole word can overshoot.
int template_tokens(const Prompt& p) { return 1 + 3 * static_cast<int>(p.messages.size()); }

Result<int> per_character(const Prompt& p) {
  int n = template_tokens(p);
  for (const auto& m : p.messages) n += static_cast<int>(m.content.size());
  return n;
}

Result<int> bpe_like(const Prompt& p) {
  int n = template_tokens(p);
  for (const auto& m : p.messages) {
    std::istringstream words(m.content);
    std::string w;
    while (words >> w) n += static_cast<int>((w.size() + 2) / 3);  // "a" 1, "kobari" 2, "kobarite" 3
  }
  return n;
}

Prompt chat_prompt() { return Prompt{"greeting", {{"system", "Be brief."}, {"user", "Say hello."}}}; }

TEST(FitPrompt, ReachesTheExactCountWithEveryCounter) {
  for (const TokenCounter& counter : {TokenCounter(per_character), TokenCounter(bpe_like)}) {
    for (int tokens : {40, 64, 65, 257, 1000}) {
      auto p = fit_prompt(chat_prompt(), tokens, counter, 7);
      ASSERT_TRUE(p.ok()) << tokens << ": " << p.error().message;
      EXPECT_EQ(*counter(*p), tokens);
      // The filler goes before the last user message; the rest is untouched.
      EXPECT_EQ(p->messages[0].content, "Be brief.");
      EXPECT_THAT(p->messages[1].content, ::testing::EndsWith("\n\nSay hello."));
      EXPECT_EQ(p->id, "greeting");
    }
  }
}

TEST(FitPrompt, SyntheticPromptsAreFillerAlone) {
  const auto prompts = synthetic_prompts(3);
  ASSERT_EQ(prompts.size(), 3u);
  EXPECT_EQ(prompts[0].id, "synthetic-01");
  EXPECT_EQ(prompts[2].id, "synthetic-03");
  auto p = fit_prompt(prompts[0], 32, per_character, filler_seed(42, 0));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(*per_character(*p), 32);
  EXPECT_EQ(p->messages[0].content.find("\n\n"), std::string::npos);
}

TEST(FitPrompt, SameSeedSameTextOtherPromptOtherText) {
  auto a = fit_prompt(chat_prompt(), 100, bpe_like, filler_seed(42, 0));
  auto b = fit_prompt(chat_prompt(), 100, bpe_like, filler_seed(42, 0));
  auto c = fit_prompt(chat_prompt(), 100, bpe_like, filler_seed(42, 1));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->messages[1].content, b->messages[1].content);
  EXPECT_NE(a->messages[1].content, c->messages[1].content);
  EXPECT_EQ(filler_text(5, 3), filler_text(5, 3));
  EXPECT_EQ(filler_text(5, 4).rfind(filler_text(5, 3), 0), 0u);  // more words extend the same text
}

TEST(FitPrompt, APromptLongerThanAskedIsAnError) {
  auto p = fit_prompt(chat_prompt(), 10, per_character, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("prompt greeting counts 26 tokens without filler, more than shape.prompt_tokens 10"));
}

TEST(FitPrompt, CounterErrorsNameThePrompt) {
  TokenCounter broken = [](const Prompt&) -> Result<int> { return make_error("POST /tokenize: HTTP 404"); };
  auto p = fit_prompt(chat_prompt(), 64, broken, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("prompt greeting: counting its tokens: POST /tokenize: HTTP 404"));
}

TEST(FitPrompt, NoExactFitSaysTheNearestCounts) {
  TokenCounter even = [](const Prompt& p) -> Result<int> { return 2 * ((*per_character(p) + 1) / 2); };
  auto p = fit_prompt(chat_prompt(), 65, even, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("cannot make it exactly 65 tokens"));
  EXPECT_THAT(p.error().message, HasSubstr("nearest counts 64 and 66"));
}

}  // namespace
}  // namespace fp
