// flashproof report PATH: one self-contained HTML file for a run, a case, a fingerprint or a whole
// results tree (report/html_report.h); and --junit FILE: the failure explanations into CTest's JUnit.
#include <iostream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "report/ctest_measurements.h"
#include "report/html_report.h"
#include "report/result_file.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kReportUsageText =
    "usage: flashproof report PATH [-o FILE] [--results DIR]\n"
    "       flashproof report --junit FILE\n"
    "       flashproof report --ctest RESULT.json\n"
    "Writes one self-contained HTML file (no network, no server; open it in any browser): per case the\n"
    "verdict with its evidence, every figure's samples against the golden, memory, answers; per A/B run\n"
    "(ab.json) both arms' distributions and memory; per support matrix (matrix.json) its table; per\n"
    "case the trend over the runs kept in history.tsv, with the change at each runtime build marked.\n\n"
    "PATH: a run folder, a case folder (its latest run), a fingerprint folder or a results folder (the\n"
    "latest run of every case), or an ab-<stamp> or matrix-<stamp> folder.\n\n"
    "options:\n"
    "  -o, --output FILE  where to write (default: PATH/report.html, or beside PATH when it is a file)\n"
    "  --results DIR      the results root holding history.tsv (default: PATH or the folders above it)\n"
    "  --junit FILE       rewrite a JUnit file from `ctest --output-junit`: each empty failure message\n"
    "                     gets the explanation its test printed (CTest leaves it empty)\n"
    "  --ctest RESULT     print a past run's key figures as <CTestMeasurement> tags and its failure as\n"
    "                     <CTestDetails> (what `flashproof run --ctest` prints), to resubmit it to CDash\n"
    "exit: 0 written, 1 nothing to report or cannot write, 64 usage\n";

int fill_junit(const std::string& path) {
  auto text = read_file(path);
  if (!text) {
    std::cerr << "flashproof report: " << text.error().message << "\n";
    return 1;
  }
  JunitFill f = fill_junit_failure_messages(*text);
  if (auto st = write_file_atomic(path, f.text); !st) {
    std::cerr << "flashproof report: " << st.error().message << "\n";
    return 1;
  }
  std::cerr << "flashproof report: " << path << ": " << f.filled << " failure message(s) filled\n";
  return 0;
}

int print_ctest(const std::string& path) {
  auto r = load_result_json(path);
  if (!r) {
    std::cerr << "flashproof report: " << r.error().message << "\n";
    return 1;
  }
  for (const auto& line : failure_explanation(*r)) std::cout << "FAIL " << r->case_name << ": " << line << "\n";
  for (const auto& m : run_measurements(*r)) std::cout << m << "\n";
  if (std::string s = failure_summary(*r); !s.empty()) std::cout << ctest_details(s) << "\n";
  return 0;
}

}  // namespace

int report_command(int argc, char** argv) {
  std::string path, output, results, junit, ctest_result;
  Args args("report", argc, argv, kReportUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kReportUsageText;
      return 0;
    } else if (a == "-o" || a == "--output") {
      output = args.value();
    } else if (a == "--results") {
      results = args.value();
    } else if (a == "--ctest") {
      ctest_result = args.value();
    } else if (a == "--junit") {
      junit = args.value();
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
    } else if (path.empty()) {
      path = a;
    } else {
      args.usage_error("one PATH only (got " + quote(path) + " and " + quote(a) + ")");
    }
  }
  if (!ctest_result.empty()) return print_ctest(ctest_result);
  if (!junit.empty()) {
    if (!path.empty()) {
      std::cerr << "flashproof report: --junit rewrites a JUnit file; give no PATH with it\n";
      return 64;
    }
    return fill_junit(junit);
  }
  if (path.empty()) {
    std::cerr << "flashproof report: name a run, case, fingerprint or results folder, e.g. results/\n" << kReportUsageText;
    return 64;
  }
  auto data = load_report_data(path, results);
  if (!data) {
    std::cerr << "flashproof report: " << data.error().message << "\n";
    return 1;
  }
  if (output.empty()) {
    const bool is_file = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
    output = is_file ? path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1) + "report.html"
                     : path + "/report.html";
  }
  if (auto st = write_file_atomic(output, render_html_report(*data)); !st) {
    std::cerr << "flashproof report: " << st.error().message << "\n";
    return 1;
  }
  size_t points = 0;
  for (const auto& [c, t] : data->trends) points += t.size();
  std::cout << output << "\n";
  std::cerr << "flashproof report: " << data->cases.size() << " case(s), " << data->ab_runs.size() << " A/B run(s), " << data->matrix_runs.size() << " matrix run(s), " << points
            << " past run(s) in the trends" << (data->results_root.empty() ? " (no history.tsv found)" : "")
            << (data->notes.empty() ? "" : "; " + std::to_string(data->notes.size()) + " note(s) in the report") << "\n";
  return 0;
}

}  // namespace fp
