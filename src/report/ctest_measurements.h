// What a case tells CTest beyond its exit code, printed in the test's output:
//  - <CTestMeasurement type="numeric/double" name="ttft_ms.p50">12.3</CTestMeasurement> per key figure:
//    CTest keeps them in Testing/<stamp>/Test.xml as NamedMeasurement, CDash shows and graphs them;
//  - <CTestDetails>one line</CTestDetails>: the failure's explanation, CDash's "Details" column;
//  - a plain "FAIL case: ..." explanation (verdict with its evidence, or the figure that regressed),
//    which JUnit (ctest --output-junit) carries in system-out and `flashproof report --junit FILE`
//    copies into each <failure message="...">.
// CTest removes the tags from the output it stores; the plain lines stay.
#pragma once

#include <string>
#include <vector>

#include "result/run_result.h"

namespace fp {

// One numeric measurement tag; "" when the value is not finite (CTest would store "nan").
std::string ctest_measurement(const std::string& name, double value);
// One text measurement tag (type text/string).
std::string ctest_text_measurement(const std::string& name, const std::string& value);
// <CTestDetails>text</CTestDetails>, on one line.
std::string ctest_details(const std::string& text);

// The key figures of a run as measurement tags, in a stable order: status and verdict (text), every
// figure's p50 and p95 ("<figure>.p50"), cold start, memory. `prefix` goes before every name (for
// several cases in one test: "<case>/").
std::vector<std::string> run_measurements(const RunResult& r, const std::string& prefix = "");

// Why the run did not pass, in one line (the first failure, then "(+N more)"), or "" when it passed.
std::string failure_summary(const RunResult& r);
// The whole explanation, one line each: every failure (a regressed figure names the golden median,
// the measured median, the minimum effect and the noise band), then the verdict's evidence (levels used and quoted log
// lines) when the verdict is not as expected.
std::vector<std::string> failure_explanation(const RunResult& r);

// Rewrites a JUnit file written by `ctest --output-junit`: every <failure message=""> gets the
// explanation its test printed (the lines starting "FAIL ", "flashproof run: " or "result: " in its
// system-out, joined with " | "). Returns the new text and how many were filled. CTest (3.25 at least) leaves
// the message empty for a test that failed by its exit code, and drops <CTestDetails> from JUnit.
struct JunitFill {
  std::string text;
  int filled = 0;
};
JunitFill fill_junit_failure_messages(const std::string& junit_xml);

}  // namespace fp
