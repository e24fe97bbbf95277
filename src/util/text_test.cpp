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

TEST(WithPlaceholder, ReplacesTheFolderOnlyWhereItIsAWholePath) {
  EXPECT_EQ(with_placeholder("/srv/suite/cases/c.json", "/srv/suite", "{suite}"), "{suite}/cases/c.json");
  EXPECT_EQ(with_placeholder("/srv/suite", "/srv/suite", "{suite}"), "{suite}");
  EXPECT_EQ(with_placeholder("a=/srv/suite/x:/srv/suite/y", "/srv/suite", "{suite}"), "a={suite}/x:{suite}/y");
  // Another folder that merely starts or ends the same way is left alone.
  EXPECT_EQ(with_placeholder("/srv/suite-b/x", "/srv/suite", "{suite}"), "/srv/suite-b/x");
  EXPECT_EQ(with_placeholder("/tmp/srv/suite/x", "/srv/suite", "{suite}"), "/tmp/srv/suite/x");
  EXPECT_EQ(with_placeholder("/srv/suite/x", "", "{suite}"), "/srv/suite/x");
}

}  // namespace
}  // namespace fp
