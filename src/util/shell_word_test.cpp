#include "util/shell_word.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(ShellWord, QuotesOnlyWhatTheShellWouldSplitOrExpand) {
  EXPECT_EQ(shell_word("/var/cache/flashproof/sid-prefix/usr/bin/llama-server"), "/var/cache/flashproof/sid-prefix/usr/bin/llama-server");
  EXPECT_EQ(shell_word("/srv/my suite"), "'/srv/my suite'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_word(""), "''");
}

}  // namespace
}  // namespace fp
