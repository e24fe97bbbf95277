#include "util/text.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(MarkupEscape, EscapesWhatEndsATagOrAnAttribute) {
  EXPECT_EQ(markup_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(markup_escape("line 1\r\nline 2"), "line 1\r\nline 2");
  EXPECT_EQ(markup_escape(""), "");
}

TEST(MarkupEscape, FlattensLineBreaksForOneLineAttributes) {
  EXPECT_EQ(markup_escape("line 1\r\nline <2>", true), "line 1 line &lt;2&gt;");
}

TEST(Quote, EscapesControlCharactersAndQuotes) {
  EXPECT_EQ(quote("a\tb"), "\"a\\tb\"");
  EXPECT_EQ(quote("say \"hi\""), "\"say \\\"hi\\\"\"");
}

}  // namespace
}  // namespace fp
