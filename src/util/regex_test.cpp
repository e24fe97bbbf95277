#include "util/regex.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(Regex, SearchesAndCaptures) {
  Regex re(R"(flash_attn\s+= (enabled|disabled|auto))");
  RegexMatch m;
  ASSERT_TRUE(regex_search("llama_context: flash_attn    = enabled", re, m));
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.str(1), "enabled");
  EXPECT_EQ(m.position(0), 15u);
  EXPECT_FALSE(regex_search("flash_attn = on", re, m));
  EXPECT_FALSE(m.gave_up());
}

TEST(Regex, UnmatchedOptionalGroupIsNotMatched) {
  Regex re("a(b)?(c)");
  RegexMatch m;
  ASSERT_TRUE(regex_search("xac", re, m));
  EXPECT_FALSE(m[1].matched);
  EXPECT_EQ(m.str(1), "");
  EXPECT_TRUE(m[2].matched);
  EXPECT_EQ(m[7].matched, false);  // beyond the groups: unmatched, not a crash
}

TEST(Regex, LookaheadOfTheDeviceRule) {
  // the one data rule that needs a lookahead (llama-server.json, the device list)
  Regex re(R"(^([A-Za-z][^\s:\[]*(?:\[[^\]]*\])?): (?!\s*- )(.+) \(\d+ MiB, \d+ MiB free\)$)");
  EXPECT_TRUE(regex_search("CUDA0: NVIDIA H200 (143771 MiB, 142000 MiB free)", re));
  EXPECT_FALSE(regex_search("CUDA0:  - NVIDIA H200 (143771 MiB, 142000 MiB free)", re));
}

TEST(Regex, AnchorsAreTheTextsNotTheLines) {
  // std::regex's ECMAScript grammar: ^ and $ at the text's ends only, "." never a newline
  EXPECT_FALSE(regex_search("first\nsecond", Regex("^second")));
  EXPECT_FALSE(regex_search("first\n", Regex("first$")));
  EXPECT_FALSE(regex_search("a\nb", Regex("a.b")));
  EXPECT_TRUE(regex_search("a b", Regex("a.b")));
}

TEST(Regex, WholeMatch) {
  Regex name("[a-z0-9][a-z0-9._-]{0,80}");
  EXPECT_TRUE(regex_match("chat-tiny", name));
  EXPECT_FALSE(regex_match("chat tiny", name));
  EXPECT_FALSE(regex_match("", name));
  // the whole text, even where a shorter alternative matches first
  EXPECT_TRUE(regex_match("abc", Regex("a|abc")));
  RegexMatch m;
  ASSERT_TRUE(regex_match("CUDA12", Regex("CUDA([0-9]+)"), m));
  EXPECT_EQ(m.str(1), "12");
}

TEST(Regex, IgnoreCase) {
  EXPECT_TRUE(regex_search("X-Api-Key", Regex("api[-_]?key", true)));
  EXPECT_FALSE(regex_search("X-Api-Key", Regex("api[-_]?key")));
}

TEST(Regex, BadPatternIsAnErrorWithItsOffset) {
  auto r = Regex::compile("flash_attn (enabled");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("missing closing parenthesis"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("offset 19"), std::string::npos) << r.error().message;
}

// The reason for the engine: std::regex recursed once per character and overflowed the stack on a
// long record; this one searches a record of megabytes whole.
TEST(Regex, LongTextIsSearchedWhole) {
  std::string line = "llama_context: " + std::string(2'000'000, 'x') + " flash_attn    = enabled";
  RegexMatch m;
  ASSERT_TRUE(regex_search(line, Regex(R"(flash_attn\s+= (\w+))"), m));
  EXPECT_EQ(m.str(1), "enabled");
  EXPECT_EQ(m.position(0), 15u + 2'000'000u + 1u);
  // the pattern shape that recursed deepest in libstdc++ (a group repeated per character)
  EXPECT_TRUE(regex_search(std::string(200'000, 'a') + "b", Regex("(?:a|c)+b")));
  EXPECT_TRUE(regex_match(std::string(200'000, 'a'), Regex("(a)*")));
}

TEST(Regex, CatastrophicBacktrackingGivesUpInsteadOfHanging) {
  RegexMatch m;
  EXPECT_FALSE(regex_search(std::string(40, 'a') + "!", Regex("^(a+)+$"), m));
  EXPECT_TRUE(m.gave_up());
}

TEST(Regex, FindAll) {
  auto all = regex_find_all("0.01.000 I a 0.01.001 I b", Regex(R"(\d+\.\d+\.\d+ I )"));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].position(0), 13u);
  EXPECT_EQ(regex_find_all("aaa", Regex("x*")).size(), 4u);  // empty matches advance
}

}  // namespace
}  // namespace fp
