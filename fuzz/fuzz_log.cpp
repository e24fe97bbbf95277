// Fuzzes the level 1 and 2 log readers (record splitting, log scan, placement) with the real
// signatures of every runtime data file that declares placement or log rules (llama-server, vLLM),
// and the path a log's bytes take into the result and the report: made text where the log is read
// (util/utf8.h, what read_text_file does), split, scanned, decided; the verdict, its quotes and the
// log's last lines in a result; result.json written with nlohmann_json's strict dump (it throws on
// a byte that is not UTF-8: the abort of issue 44), read back, and the HTML report rendered from it.
// result.txt and the HTML must be valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/runtime_signatures.h"
#include "evidence/verdict.h"
#include "fuzz_signatures.h"
#include "report/html_report.h"
#include "report/result_file.h"
#include "util/text.h"
#include "util/utf8.h"

using fp::fuzz::signatures;

namespace {

void log_to_report(const std::string& text, const std::vector<fp::LogRecord>& records, const fp::LogScan& scan,
                   const fp::Placement& placement, const fp::RuntimeSignatures& sigs) {
  fp::VerdictInput in = fp::verdict_input(sigs);
  in.log = &scan;
  in.placement = &placement;
  const fp::Verdict v = fp::decide(in);
  fp::RunResult r;
  r.case_name = "fuzz";
  r.runtime = sigs.runtime;
  r.complete = true;
  r.verdict.activity = v.activity;
  r.verdict.fused_backends = v.fused_backends;
  r.verdict.explanation = v.explanation;
  r.verdict.quotes = v.quotes;
  r.verdict.as_expected = fp::verdict_as_expected(v, true);
  for (int l : v.levels_used) r.verdict.levels_used.push_back(v.levels[static_cast<size_t>(l - 1)].name);
  r.verdict.levels_unavailable = v.levels_unavailable;
  // What a failed launch quotes (runtime/launcher.h log_tail): the last lines, each cut at 300 bytes.
  std::string tail;
  const std::vector<std::string> lines = fp::split_lines(text);
  for (size_t i = lines.size() > 10 ? lines.size() - 10 : 0; i < lines.size(); ++i)
    tail += "    | " + lines[i].substr(0, fp::utf8_cut(lines[i], 300)) + "\n";
  r.failures.push_back("log ends:\n" + tail);
  if (!records.empty()) r.evidence_signals = records.front().text.substr(0, fp::utf8_cut(records.front().text, 200));

  const std::string json = fp::result_to_json(r).dump(2);  // strict: throws on text that is not UTF-8
  if (fp::invalid_utf8_at(fp::result_to_text(r)) != std::string_view::npos) __builtin_trap();
  fp::ReportData data;
  data.source = "fuzz";
  fp::ReportCase rc;
  rc.result = nlohmann::json::parse(json);
  rc.result_path = "fuzz/result.json";
  data.cases.push_back(rc);
  if (fp::invalid_utf8_at(fp::render_html_report(data)) != std::string_view::npos) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string text = fp::valid_utf8(bytes);  // where a runtime log is read
  if (fp::invalid_utf8_at(text) != std::string_view::npos) __builtin_trap();
  for (const auto& sigs : signatures()) {
    std::vector<fp::LogRecord> records = fp::split_records(bytes, sigs);  // the readers hold raw bytes too
    for (const auto& r : records)
      if (r.text.empty() || r.line == 0) __builtin_trap();  // empty records are dropped; lines are 1-based
    fp::LogScan scan = fp::scan_log(records, sigs);
    fp::ResolvedState st = scan.resolved();
    (void)st;
    (void)scan.split_counts();
    (void)scan.kv_mib_by_device();
    (void)scan.compute_mib_by_device();
    (void)scan.kv_total();
    (void)scan.decided_backends();
    fp::Placement p = fp::scan_placement(records, sigs);
    if (p.fused_total() < 0 || p.unfused_total() < 0) __builtin_trap();
    (void)fp::format_counts(p.fused_nodes);

    std::vector<fp::LogRecord> text_records = fp::split_records(text, sigs);
    const fp::LogScan text_scan = fp::scan_log(text_records, sigs);
    const fp::Placement text_placement = fp::scan_placement(text_records, sigs);
    log_to_report(text, text_records, text_scan, text_placement, sigs);
  }
  return 0;
}
