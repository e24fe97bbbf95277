#include "report/ctest_measurements.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

RunResult failing_run() {
  RunResult r;
  r.case_name = "chat-tiny";
  r.complete = true;
  r.verdict.activity = Activity::NotActive;
  r.verdict.fused_backends = {{"CPU", 30}};
  r.verdict.levels_used = {"log", "placement"};
  r.verdict.quotes = {"llama_context: flash_attn = disabled"};
  r.failures = {"fused attention expected active on CPU, evidence says not active: log: \"flash_attn = disabled\"",
                "figure ttft_ms_p95: regressed: worse by 12 (40%): golden median 30, measured median 42 (n=5), tolerance 7.5"};
  FigureResult f;
  f.name = "ttft_ms";
  f.samples = {10, 12, 14};
  f.summary = summarize(f.samples);
  r.figures.push_back(f);
  r.peak_rss_mib = 27.25;
  r.cold_ready_ms = -1;  // not measured: no tag
  return r;
}

// CTest reads between the tags raw and escapes when it writes Test.xml: nothing is escaped here,
// only what would end the tag is replaced.
TEST(CtestMeasurements, TagsCarryRawTextAndSkipNonFinite) {
  EXPECT_EQ(ctest_measurement("a<b", 1.5), "<CTestMeasurement type=\"numeric/double\" name=\"a\u2039b\">1.5</CTestMeasurement>");
  EXPECT_EQ(ctest_measurement("x", std::nan("")), "");
  EXPECT_EQ(ctest_text_measurement("verdict", "not active\n(CPU)"),
            "<CTestMeasurement type=\"text/string\" name=\"verdict\">not active (CPU)</CTestMeasurement>");
  EXPECT_EQ(ctest_details("a & \"b\" <c>"), "<CTestDetails>a & 'b' \u2039c\u203a</CTestDetails>");
}

TEST(CtestMeasurements, KeyFiguresOfARun) {
  auto tags = run_measurements(failing_run());
  EXPECT_THAT(tags, Contains(ctest_measurement("ttft_ms.p50", 12)));
  EXPECT_THAT(tags, Contains(ctest_measurement("memory.host_peak_rss_mib", 27.25)));
  EXPECT_THAT(tags, Contains(ctest_text_measurement("status", "fail")));
  EXPECT_THAT(tags, Contains(ctest_text_measurement("verdict", "not active (CPU 30) [log+placement]")));
  for (const auto& t : tags) EXPECT_THAT(t, ::testing::Not(HasSubstr("cold.ready_ms")));
  RunResult uncompared = failing_run();
  uncompared.golden_status = "not compared";
  uncompared.golden_lines = {"figures not compared: no reviewed golden for fingerprint cpu-2c (golden/cpu-2c/chat.json does not exist)"};
  EXPECT_THAT(run_measurements(uncompared),
              Contains(ctest_text_measurement("golden", "not compared: no reviewed golden for fingerprint cpu-2c (golden/cpu-2c/chat.json does not exist)")));
  auto prefixed = run_measurements(failing_run(), "chat-tiny/");
  EXPECT_THAT(prefixed, Contains(ctest_measurement("chat-tiny/ttft_ms.p50", 12)));
}

TEST(CtestMeasurements, ExplanationCarriesVerdictEvidenceAndRegressedFigure) {
  RunResult r = failing_run();
  EXPECT_EQ(failure_summary(r).rfind("fail: fused attention expected active", 0), 0u) << failure_summary(r);
  EXPECT_THAT(failure_summary(r), HasSubstr("(+1 more)"));
  auto lines = failure_explanation(r);
  EXPECT_THAT(lines, Contains(HasSubstr("evidence says not active")));
  EXPECT_THAT(lines, Contains(AllOf(HasSubstr("evidence quote:"), HasSubstr("flash_attn = disabled"))));
  EXPECT_THAT(lines, Contains(AllOf(HasSubstr("ttft_ms_p95: regressed"), HasSubstr("golden median 30"))));
  r.failures.clear();
  r.verdict.as_expected = true;
  EXPECT_EQ(failure_summary(r), "");
  EXPECT_TRUE(failure_explanation(r).empty());
}

// What CTest 3.25 writes for a test that failed by its exit code (seen: empty failure message).
const char* kJunit = R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="3" failures="1">
	<testcase name="case:chat" classname="case:chat" time="1.2" status="fail">
		<failure message=""/>
		<system-out>[chat] evidence pass
FAIL chat: fused attention expected active on CPU, evidence says not active: log: &quot;flash_attn = disabled&quot;
FAIL chat: evidence quote: a &lt;b&gt; &amp; c
result: /r/result.txt
</system-out>
	</testcase>
	<testcase name="case:ok" classname="case:ok" time="1" status="run">
		<system-out>FAIL nothing here, it passed</system-out>
	</testcase>
	<testcase name="case:skip" classname="case:skip" time="0" status="notrun">
		<skipped message="SKIP_RETURN_CODE=125"/>
		<system-out>flashproof run: SKIP: llama-server not found</system-out>
	</testcase>
</testsuite>
)";

TEST(CtestMeasurements, JunitFailureMessagesAreFilledFromTheExplanation) {
  JunitFill f = fill_junit_failure_messages(kJunit);
  EXPECT_EQ(f.filled, 1);
  EXPECT_THAT(f.text, HasSubstr("<failure message=\"FAIL chat: fused attention expected active on CPU, evidence says not active: log: "
                                "&quot;flash_attn = disabled&quot; | FAIL chat: evidence quote: a &lt;b&gt; &amp; c | result: /r/result.txt\"/>"));
  EXPECT_THAT(f.text, HasSubstr("<skipped message=\"SKIP_RETURN_CODE=125\"/>"));
  JunitFill again = fill_junit_failure_messages(f.text);
  EXPECT_EQ(again.filled, 0);
  EXPECT_EQ(again.text, f.text);
}

}  // namespace
}  // namespace fp
