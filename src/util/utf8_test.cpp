#include "util/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/scratch_files.h"
#include "util/text.h"

namespace fp {
namespace {

TEST(InvalidUtf8At, FindsTheFirstByteOfNoValidSequence) {
  EXPECT_EQ(invalid_utf8_at("plain ascii"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), std::string_view::npos);  // é € 😀
  EXPECT_EQ(invalid_utf8_at("hi \xff\xfe\n"), 3u);
  EXPECT_EQ(invalid_utf8_at("ab\xC3"), 2u);               // a character cut at the end
  EXPECT_EQ(invalid_utf8_at("\xC0\xAF"), 0u);             // overlong "/"
  EXPECT_EQ(invalid_utf8_at("x\xED\xA0\x80"), 1u);        // a UTF-16 surrogate
  EXPECT_EQ(invalid_utf8_at("\xF4\x90\x80\x80"), 0u);     // above U+10FFFF
  EXPECT_EQ(invalid_utf8_at(std::string("a\0b", 3)), std::string_view::npos);
}

TEST(ValidUtf8, ReplacesEachMaximalSubpartAndCountsTheBytes) {
  size_t n = 99;
  EXPECT_EQ(valid_utf8("caf\xC3\xA9", &n), "caf\xC3\xA9");
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(valid_utf8("hi \xff\xfe!", &n), "hi \xEF\xBF\xBD\xEF\xBF\xBD!");
  EXPECT_EQ(n, 2u);
  // A three-byte character cut after two bytes is one subpart: one U+FFFD for two bytes.
  EXPECT_EQ(valid_utf8("\xE2\x82x", &n), "\xEF\xBF\xBDx");
  EXPECT_EQ(n, 2u);
}

TEST(ValidUtf8, AlwaysGivesTextJsonCanWrite) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i), bytes += static_cast<char>(255 - i), bytes += "\xE2\x82";
  const std::string text = valid_utf8(bytes);
  EXPECT_EQ(invalid_utf8_at(text), std::string_view::npos);
  EXPECT_NO_THROW((void)nlohmann::json(text).dump());
}

TEST(ValidUtf8Noted, KeepsTheLargestCountPerSource) {
  clear_not_utf8_noted();
  (void)valid_utf8_noted("\xff", "log");
  (void)valid_utf8_noted("\xff\xff\xff", "log");
  (void)valid_utf8_noted("\xff\xff", "log");
  (void)valid_utf8_noted("fine", "other");
  EXPECT_EQ(not_utf8_noted(), (std::map<std::string, size_t>{{"log", 3}}));
  clear_not_utf8_noted();
  EXPECT_TRUE(not_utf8_noted().empty());
}

TEST(ReadTextFile, RepairsAndNotesUnderThePath) {
  testing::ScratchDir dir;
  const std::string path = dir.path("runtime.log");
  ASSERT_TRUE(write_file_atomic(path, "ok \xfb\xfc\n"));
  clear_not_utf8_noted();
  auto text = read_text_file(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "ok \xEF\xBF\xBD\xEF\xBF\xBD\n");
  EXPECT_EQ(not_utf8_noted().at(path), 2u);
  clear_not_utf8_noted();
}

TEST(Quote, WritesBytesThatAreNotUtf8AsEscapesAndNeverCutsACharacter) {
  EXPECT_EQ(quote("a\xff" "b"), "\"a\\xffb\"");
  EXPECT_EQ(quote("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  std::string long_text(119, 'x');
  long_text += "\xC3\xA9\xC3\xA9";
  const std::string q = quote(long_text);
  EXPECT_EQ(invalid_utf8_at(q), std::string_view::npos) << q;
  EXPECT_EQ(q, "\"" + std::string(119, 'x') + "\xC3\xA9...\"");
}

}  // namespace
}  // namespace fp
