#include "report/ctest_measurements.h"

#include <cmath>
#include <cstdio>

#include "util/text.h"

namespace fp {
namespace {

// CTest takes what is between its tags as it is (no XML unescaping) and escapes it itself when it
// writes Test.xml: the text goes in raw, with only the characters that would end a tag or an
// attribute replaced.
std::string tag_text(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '<') out += "\u2039";
    else if (ch == '>') out += "\u203a";
    else if (ch == '"') out += '\'';
    else if (ch == '\n' || ch == '\r') out += ' ';
    else out += ch;
  }
  return out;
}


std::string xml_unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string::npos) {
      out += s[i];
      continue;
    }
    const std::string ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp") out += '&';
    else if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (!ent.empty() && ent[0] == '#') {
      long code = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X') ? std::strtol(ent.c_str() + 2, nullptr, 16) : std::strtol(ent.c_str() + 1, nullptr, 10);
      out += code > 0 && code < 128 ? static_cast<char>(code) : '?';
    } else {
      out += s.substr(i, semi - i + 1);
    }
    i = semi;
  }
  return out;
}

std::string one_line(std::string s, size_t max = 400) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

}  // namespace

std::string ctest_measurement(const std::string& name, double value) {
  if (!std::isfinite(value)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return "<CTestMeasurement type=\"numeric/double\" name=\"" + tag_text(name) + "\">" + buf + "</CTestMeasurement>";
}

std::string ctest_text_measurement(const std::string& name, const std::string& value) {
  return "<CTestMeasurement type=\"text/string\" name=\"" + tag_text(name) + "\">" + tag_text(one_line(value)) +
         "</CTestMeasurement>";
}

std::string ctest_details(const std::string& text) { return "<CTestDetails>" + tag_text(one_line(text, 200)) + "</CTestDetails>"; }

std::vector<std::string> run_measurements(const RunResult& r, const std::string& prefix) {
  std::vector<std::string> out;
  auto num = [&](const std::string& name, double v) {
    if (std::string m = ctest_measurement(prefix + name, v); !m.empty()) out.push_back(m);
  };
  out.push_back(ctest_text_measurement(prefix + "status", r.status()));
  out.push_back(ctest_text_measurement(prefix + "verdict", verdict_text(r.verdict) + (r.verdict.levels_used.empty() ? "" : " [" + join(r.verdict.levels_used, "+") + "]")));
  if (!r.runtime_build.empty()) out.push_back(ctest_text_measurement(prefix + "runtime.build", r.runtime_build));
  // Whether the timing figures were compared with a golden, and with which: "not compared: no
  // reviewed golden for fingerprint ID" is no failure, but CDash shows it beside the figures.
  if (!r.golden_status.empty()) {
    std::string golden = r.golden_status;
    for (const auto& l : r.golden_lines)
      if (starts_with(l, "figures not compared: ")) golden = l.substr(std::string("figures ").size());
    out.push_back(ctest_text_measurement(prefix + "golden", golden));
  }
  for (const auto& f : r.figures) {
    num(f.name + ".p50", f.summary.median);
    num(f.name + ".p95", f.summary.p95);
  }
  if (r.cold_ready_ms >= 0) num("cold.ready_ms", r.cold_ready_ms);
  if (r.cold_first_ttft_ms >= 0) num("cold.first_request_ttft_ms", r.cold_first_ttft_ms);
  if (r.kv_cache_mib) num("memory.kv_cache_mib", *r.kv_cache_mib);
  for (const auto& [dev, mib] : r.compute_mib_by_device) num("memory.compute_buffer_mib." + dev, mib);
  if (r.peak_rss_mib) num("memory.host_peak_rss_mib", *r.peak_rss_mib);
  return out;
}

std::string failure_summary(const RunResult& r) {
  if (r.status() == "pass") return "";
  if (r.failures.empty()) return r.status();
  std::string s = r.status() + ": " + one_line(r.failures.front(), 160);
  if (r.failures.size() > 1) s += " (+" + std::to_string(r.failures.size() - 1) + " more)";
  return s;
}

std::vector<std::string> failure_explanation(const RunResult& r) {
  std::vector<std::string> out;
  if (r.status() == "pass") return out;
  for (const auto& f : r.failures) out.push_back(one_line(f, 2000));
  const RunVerdict& v = r.verdict;
  if (r.complete && !v.as_expected) {
    out.push_back("evidence: verdict " + verdict_text(v) + ", levels used: " + (v.levels_used.empty() ? "none" : join(v.levels_used, ", ")) +
                  (v.levels_unavailable.empty() ? "" : "; unavailable: " + join(v.levels_unavailable, "; ")));
    for (const auto& q : v.quotes) out.push_back("evidence quote: " + one_line(q, 300));
  }
  return out;
}

JunitFill fill_junit_failure_messages(const std::string& xml) {
  JunitFill out;
  const std::string empty_failure = "<failure message=\"\"";
  size_t pos = 0;
  while (true) {
    size_t tc = xml.find("<testcase", pos);
    if (tc == std::string::npos) break;
    size_t end = xml.find("</testcase>", tc);
    if (end == std::string::npos) break;
    end += std::string("</testcase>").size();
    std::string block = xml.substr(tc, end - tc);
    size_t f = block.find(empty_failure);
    if (f != std::string::npos) {
      std::vector<std::string> lines;
      size_t so = block.find("<system-out>");
      size_t se = block.find("</system-out>");
      if (so != std::string::npos && se != std::string::npos && se > so) {
        const std::string output = xml_unescape(block.substr(so + 12, se - so - 12));
        for (const auto& l : split_lines(output))
          if (l.rfind("FAIL ", 0) == 0 || l.rfind("flashproof run: ", 0) == 0 || l.rfind("result: ", 0) == 0) lines.push_back(l);
      }
      if (!lines.empty()) {
        std::string msg = one_line(join(lines, " | "), 4000);
        block.replace(f, empty_failure.size(), "<failure message=\"" + markup_escape(msg, /*flatten_newlines=*/true) + "\"");
        ++out.filled;
      }
    }
    out.text += xml.substr(pos, tc - pos) + block;
    pos = end;
  }
  out.text += xml.substr(pos);
  return out;
}

}  // namespace fp
