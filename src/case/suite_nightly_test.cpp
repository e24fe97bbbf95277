#include "case/suite_nightly.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace fp {
namespace {

using ::testing::HasSubstr;

TEST(SuiteNightly, UnitsAreNamedForTheSuiteFolder) {
  EXPECT_EQ(nightly_unit_name("/home/op/fa-suite"), "flashproof-nightly-fa-suite");
  EXPECT_EQ(nightly_unit_name("/srv/my suite.v2/"), "flashproof-nightly-my-suite-v2");
  EXPECT_EQ(nightly_file_name("flashproof-nightly.timer", "/x/s"), "flashproof-nightly-s.timer");
  EXPECT_EQ(nightly_file_name("run-nightly.sh", "/x/s"), "run-nightly.sh");
}

TEST(SuiteNightly, EachFileGetsThePathQuotedTheWayItReadsIt) {
  const NightlyValues v{"/srv/it's 100%", "/usr/bin/flashproof", "/usr", "ops"};
  EXPECT_EQ(render_nightly("suite=@SUITE_SH@", v), "suite='/srv/it'\\''s 100%'");
  // systemd: % starts a specifier unless doubled; inside ExecStart's quotes \ and " are escaped.
  EXPECT_EQ(render_nightly("WorkingDirectory=@SUITE_UNIT@", v), "WorkingDirectory=/srv/it's 100%%");
  EXPECT_EQ(render_nightly("ExecStart=/bin/bash \"@SUITE_UNIT_QUOTED@/x\"", NightlyValues{"/a\"b", "", "", ""}),
            "ExecStart=/bin/bash \"/a\\\"b/x\"");
  EXPECT_EQ(render_nightly("Documentation=file://@SUITE_URL@/README.md", v), "Documentation=file:///srv/it%%27s%%20100%%25/README.md");
  // cron: % ends the command unless escaped.
  EXPECT_EQ(render_nightly("@SUITE_CRON@", v), "'/srv/it'\\''s 100\\%'");
  EXPECT_EQ(render_nightly("User=@USER@ @UNIT@", v), "User=ops flashproof-nightly-it-s-100-");
}

TEST(SuiteNightly, TheShippedTemplatesHaveNoPlaceholderLeft) {
  for (const char* f : {"run-nightly.sh", "flashproof-nightly.service", "flashproof-nightly.timer", "crontab"}) {
    const std::string path = std::string(FLASHPROOF_SOURCE_DIR) + "/templates/suite/nightly/" + f;
    FILE* in = std::fopen(path.c_str(), "r");
    ASSERT_NE(in, nullptr) << path;
    std::string text;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;) text.append(buf, n);
    std::fclose(in);
    const std::string out = render_nightly(text, {"/s", "/b/flashproof", "/p", "u"});
    EXPECT_FALSE(std::regex_search(out, std::regex("@[A-Z_]+@"))) << f << ":\n" << out;
  }
}

}  // namespace
}  // namespace fp
