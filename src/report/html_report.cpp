#include "report/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "golden/golden_file.h"
#include "golden/threshold_policy.h"
#include "history/history.h"
#include "measure/stats.h"
#include "report/headroom_text.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- small helpers

std::string esc(const std::string& s) { return markup_escape(s); }

// Coordinates in SVG: one decimal is plenty.
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string str(const json& j, std::initializer_list<const char*> path, const std::string& fallback = "") {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return fallback;
    cur = &(*cur)[k];
  }
  return cur->is_string() ? cur->get<std::string>() : cur->is_null() ? fallback : cur->dump();
}

double dbl(const json& j, const char* key, double fallback = kNoValue) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return fallback;
  return j[key].get<double>();
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::vector<double> samples_of(const json& fig) {
  std::vector<double> out;
  if (fig.is_object() && fig.contains("samples") && fig["samples"].is_array())
    for (const auto& v : fig["samples"])
      if (v.is_number() && std::isfinite(v.get<double>())) out.push_back(v.get<double>());
  return out;
}

bool lower_is_better(const json& fig) { return str(fig, {"direction"}, "lower_is_better") != "higher_is_better"; }

// Deterministic jitter in [-1, 1] for sample i, so dots of equal value do not hide each other.
double jitter(size_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<double>(x % 2001) / 1000.0 - 1.0;
}

std::string status_class(const std::string& s) {
  if (s == "pass" || s == "active" || s == "identical" || s == "confirmed") return "ok";
  if (s == "fail" || s == "not active" || s == "contradicted" || s == "differs") return "bad";
  return "warn";
}

std::string badge(const std::string& text, const std::string& cls) { return "<span class=\"badge " + cls + "\">" + esc(text) + "</span>"; }

// ---------------------------------------------------------------- axes and plots

struct Axis {
  double lo = 0, hi = 1;
  double x0 = 0, x1 = 1;  // pixels
  double at(double v) const { return hi == lo ? (x0 + x1) / 2 : x0 + (v - lo) / (hi - lo) * (x1 - x0); }
};

Axis make_axis(std::vector<double> values, double x0, double x1, bool from_zero = false) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
  Axis a;
  a.x0 = x0;
  a.x1 = x1;
  if (values.empty()) return a;
  a.lo = *std::min_element(values.begin(), values.end());
  a.hi = *std::max_element(values.begin(), values.end());
  if (from_zero && a.lo > 0) a.lo = 0;
  double pad = (a.hi - a.lo) * 0.06;
  if (pad == 0) pad = std::fabs(a.hi) * 0.1 + 1e-9;
  a.hi += pad;
  // Durations, rates and sizes are never negative: the padding does not cross zero.
  if (!(from_zero && a.lo == 0)) a.lo = a.lo >= 0 && a.lo - pad < 0 ? 0 : a.lo - pad;
  return a;
}

std::string x_ticks(const Axis& a, double y, double tick_to) {
  std::string out;
  for (int i = 0; i <= 4; ++i) {
    double v = a.lo + (a.hi - a.lo) * i / 4.0;
    double x = a.at(v);
    out += "<line class=\"grid\" x1=\"" + px(x) + "\" y1=\"" + px(tick_to) + "\" x2=\"" + px(x) + "\" y2=\"" + px(y) + "\"/>";
    out += "<text class=\"tick\" x=\"" + px(x) + "\" y=\"" + px(y + 12) + "\" text-anchor=\"middle\">" + readable(v) + "</text>";
  }
  return out;
}

std::string svg_open(const std::string& kind, double w, double h, const std::string& label) {
  return "<svg class=\"plot\" data-plot=\"" + esc(kind) + "\" role=\"img\" aria-label=\"" + esc(label) + "\" width=\"" + px(w) +
         "\" height=\"" + px(h) + "\" viewBox=\"0 0 " + px(w) + " " + px(h) + "\">";
}

// One row of a distribution: dots, the box from p25 to p75, whiskers min..max, the median.
std::string distribution_row(const Axis& a, const std::vector<double>& s, double y, double half, const std::string& cls) {
  std::string out;
  if (s.empty()) return "<text class=\"tick\" x=\"" + px(a.x0) + "\" y=\"" + px(y + 4) + "\">no samples</text>";
  const double q1 = percentile(s, 25), q3 = percentile(s, 75), md = median(s);
  const double mn = *std::min_element(s.begin(), s.end()), mx = *std::max_element(s.begin(), s.end());
  out += "<line class=\"whisker\" x1=\"" + px(a.at(mn)) + "\" y1=\"" + px(y) + "\" x2=\"" + px(a.at(mx)) + "\" y2=\"" + px(y) + "\"/>";
  out += "<rect class=\"box " + cls + "\" x=\"" + px(a.at(q1)) + "\" y=\"" + px(y - half) + "\" width=\"" + px(std::max(1.0, a.at(q3) - a.at(q1))) +
         "\" height=\"" + px(2 * half) + "\"/>";
  for (size_t i = 0; i < s.size(); ++i)
    out += "<circle class=\"dot " + cls + "\" cx=\"" + px(a.at(s[i])) + "\" cy=\"" + px(y + jitter(i) * half * 0.8) + "\" r=\"2.6\"><title>" +
           readable(s[i]) + "</title></circle>";
  out += "<line class=\"median\" x1=\"" + px(a.at(md)) + "\" y1=\"" + px(y - half - 2) + "\" x2=\"" + px(a.at(md)) + "\" y2=\"" + px(y + half + 2) +
         "\"><title>median " + readable(md) + "</title></line>";
  return out;
}

// A run's samples of one figure against the golden: the golden median, the tolerance band up to the
// limit, the samples with their box and median.
std::string figure_vs_golden_plot(const std::string& name, const std::vector<double>& s, const GoldenMark* g) {
  const double w = 560, h = 70;
  std::vector<double> vals = s;
  // A limit below zero for a figure that cannot be negative (a wide tolerance on a rate) cannot be
  // crossed: it is drawn at zero and says so.
  const bool nonnegative = std::all_of(s.begin(), s.end(), [](double v) { return v >= 0; }) && (!g || g->median >= 0);
  const double limit = g ? (nonnegative && g->limit < 0 ? 0.0 : g->limit) : 0.0;
  if (g) {
    vals.push_back(g->median);
    vals.push_back(limit);
  }
  Axis a = make_axis(vals, 12, w - 12);
  std::string out = svg_open("figure", w, h, name + ": samples against the golden");
  out += x_ticks(a, h - 14, 6);
  if (g) {
    double x_med = a.at(g->median), x_lim = a.at(limit);
    out += "<rect class=\"band\" x=\"" + px(std::min(x_med, x_lim)) + "\" y=\"6\" width=\"" + px(std::fabs(x_lim - x_med)) + "\" height=\"" +
           px(h - 26) + "\"><title>tolerance: golden median to limit</title></rect>";
    out += "<line class=\"golden\" x1=\"" + px(x_med) + "\" y1=\"4\" x2=\"" + px(x_med) + "\" y2=\"" + px(h - 18) + "\"><title>golden median " +
           readable(g->median) + "</title></line>";
    out += "<line class=\"limit\" x1=\"" + px(x_lim) + "\" y1=\"4\" x2=\"" + px(x_lim) + "\" y2=\"" + px(h - 18) + "\"><title>limit " +
           readable(g->limit) + (limit != g->limit ? " (below zero: cannot be crossed)" : "") + "</title></line>";
  }
  out += distribution_row(a, s, (h - 20) / 2 + 2, 11, "run");
  out += "</svg>";
  return out;
}

// A/B: the arms' samples of one figure on one axis.
std::string ab_plot(const std::string& name, const std::vector<double>& off, const std::vector<double>& on) {
  const double w = 560, h = 96, left = 40;
  std::vector<double> vals = off;
  vals.insert(vals.end(), on.begin(), on.end());
  Axis a = make_axis(vals, left, w - 12);
  std::string out = svg_open("ab", w, h, name + ": flag off against flag on");
  out += x_ticks(a, h - 14, 6);
  out += "<text class=\"arm off\" x=\"4\" y=\"30\">off</text><text class=\"arm on\" x=\"4\" y=\"64\">on</text>";
  out += distribution_row(a, off, 26, 11, "off");
  out += distribution_row(a, on, 60, 11, "on");
  out += "</svg>";
  return out;
}

// Horizontal bars: label, value (MiB), one colour class per bar.
struct Bar {
  std::string label, cls;
  double value = 0;
};
std::string bars_plot(const std::string& kind, const std::string& title, const std::vector<Bar>& bars) {
  const double row = 20, left = 190, w = 560, h = row * static_cast<double>(bars.size()) + 22;
  std::vector<double> vals;
  for (const auto& b : bars) vals.push_back(b.value);
  Axis a = make_axis(vals, left, w - 60, /*from_zero=*/true);
  std::string out = svg_open(kind, w, h, title);
  for (size_t i = 0; i < bars.size(); ++i) {
    double y = 6 + row * static_cast<double>(i);
    out += "<text class=\"label\" x=\"" + px(left - 6) + "\" y=\"" + px(y + 12) + "\" text-anchor=\"end\">" + esc(bars[i].label) + "</text>";
    out += "<rect class=\"bar " + bars[i].cls + "\" x=\"" + px(left) + "\" y=\"" + px(y + 2) + "\" width=\"" +
           px(std::max(1.0, a.at(bars[i].value) - left)) + "\" height=\"" + px(row - 6) + "\"/>";
    out += "<text class=\"value\" x=\"" + px(a.at(bars[i].value) + 4) + "\" y=\"" + px(y + 12) + "\">" + readable(bars[i].value) + " MiB</text>";
  }
  out += "</svg>";
  return out;
}

// A figure's medians over the runs of one case, oldest left; a dashed line where the runtime build
// changed, labelled with the step (red when worse).
std::string trend_plot(const std::string& figure, const std::vector<TrendPoint>& pts, bool lower_better) {
  const double w = 560, h = 150, left = 52, right = 12, top = 26, bottom = 20;
  std::vector<double> vals;
  for (const auto& p : pts)
    if (auto it = p.p50.find(figure); it != p.p50.end()) vals.push_back(it->second);
  Axis y = make_axis(vals, h - bottom, top);
  auto x_at = [&](size_t i) { return pts.size() <= 1 ? (left + w - right) / 2 : left + (w - left - right) * static_cast<double>(i) / static_cast<double>(pts.size() - 1); };
  std::string out = svg_open("trend", w, h, figure + " over the runs on this machine");
  for (int i = 0; i <= 3; ++i) {
    double v = y.lo + (y.hi - y.lo) * i / 3.0;
    out += "<line class=\"grid\" x1=\"" + px(left) + "\" y1=\"" + px(y.at(v)) + "\" x2=\"" + px(w - right) + "\" y2=\"" + px(y.at(v)) + "\"/>";
    out += "<text class=\"tick\" x=\"" + px(left - 4) + "\" y=\"" + px(y.at(v) + 3) + "\" text-anchor=\"end\">" + readable(v) + "</text>";
  }
  for (const auto& st : trend_steps(pts, figure)) {
    const double x = (x_at(st.index - 1) + x_at(st.index)) / 2;
    const bool worse = lower_better ? st.change_rel > 0 : st.change_rel < 0;
    const std::string cls = std::fabs(st.change_rel) < 0.05 ? "step" : worse ? "step worse" : "step better";
    out += "<line class=\"" + cls + "\" x1=\"" + px(x) + "\" y1=\"" + px(top - 6) + "\" x2=\"" + px(x) + "\" y2=\"" + px(h - bottom) + "\"/>";
    out += "<text class=\"" + cls + "\" x=\"" + px(x + 3) + "\" y=\"" + px(top - 10) + "\">" + esc(st.to_build) + ": " + pct(st.change_rel) +
           "<title>" + esc(st.from_build + " -> " + st.to_build + ": median " + readable(st.before) + " -> " + readable(st.after)) + "</title></text>";
  }
  std::string line;
  for (size_t i = 0; i < pts.size(); ++i)
    if (auto it = pts[i].p50.find(figure); it != pts[i].p50.end()) line += px(x_at(i)) + "," + px(y.at(it->second)) + " ";
  if (!line.empty()) out += "<polyline class=\"trend\" points=\"" + line + "\"/>";
  for (size_t i = 0; i < pts.size(); ++i)
    if (auto it = pts[i].p50.find(figure); it != pts[i].p50.end())
      out += "<circle class=\"point " + status_class(pts[i].status) + "\" cx=\"" + px(x_at(i)) + "\" cy=\"" + px(y.at(it->second)) +
             "\" r=\"3.2\"><title>" + esc(pts[i].finished_utc + " " + pts[i].runtime_build + " " + pts[i].status + ": " + readable(it->second)) +
             "</title></circle>";
  if (!pts.empty()) {
    out += "<text class=\"tick\" x=\"" + px(left) + "\" y=\"" + px(h - 4) + "\">" + esc(pts.front().finished_utc) + "</text>";
    out += "<text class=\"tick\" x=\"" + px(w - right) + "\" y=\"" + px(h - 4) + "\" text-anchor=\"end\">" + esc(pts.back().finished_utc) + "</text>";
  }
  out += "</svg>";
  return out;
}

// ---------------------------------------------------------------- sections

const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#c5cad3}
main{padding:12px 24px 40px;max-width:1200px}
section.case,section.ab,section.matrix{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:10px 18px;margin:14px 0}
h2{font-size:17px;margin:6px 0}h3{font-size:14px;margin:14px 0 6px;color:#3b4354}
table{border-collapse:collapse;margin:4px 0}td,th{padding:3px 8px;border-bottom:1px solid #eceef2;text-align:left;vertical-align:top}
th{font-weight:600;color:#50586a}td.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;border-radius:3px;padding:0 6px;font-weight:600;font-size:12px}
.badge.ok{background:#d9f2e1;color:#12652f}.badge.bad{background:#fbdada;color:#9b1c1c}.badge.warn{background:#fdf0cc;color:#7a5300}
code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}pre{background:#f3f4f7;padding:6px 8px;overflow:auto;max-height:240px}
ul.quotes{margin:4px 0;padding-left:18px}ul.quotes li code{background:#f3f4f7}
.grid{stroke:#e6e8ec}.tick{font-size:10px;fill:#6b7385}.label,.value,.arm{font-size:11px;fill:#3b4354}
.band{fill:#fdeaea}.golden{stroke:#1b8a3f;stroke-width:2}.limit{stroke:#c62828;stroke-width:1.5;stroke-dasharray:4 3}
.whisker{stroke:#8a92a3}.box{fill-opacity:.18;stroke-width:1}.box.run{fill:#2f5fb3;stroke:#2f5fb3}.box.off{fill:#8a5a00;stroke:#8a5a00}.box.on{fill:#2f5fb3;stroke:#2f5fb3}
.dot{fill-opacity:.75}.dot.run,.dot.on{fill:#2f5fb3}.dot.off{fill:#b07400}.median{stroke:#1d2330;stroke-width:2.5}
.arm.off{fill:#8a5a00;font-weight:600}.arm.on{fill:#2f5fb3;font-weight:600}
.bar.kv{fill:#2f5fb3}.bar.compute{fill:#6f8fd0}.bar.rss{fill:#8a92a3}.bar.off{fill:#b07400}.bar.on{fill:#2f5fb3}
.trend{fill:none;stroke:#2f5fb3;stroke-width:1.5}.point.ok{fill:#1b8a3f}.point.bad{fill:#c62828}.point.warn{fill:#c98a00}
line.step{stroke:#6b7385;stroke-dasharray:3 3}line.step.worse{stroke:#c62828}line.step.better{stroke:#1b8a3f}
text.step{font-size:11px;fill:#50586a}text.step.worse{fill:#c62828;font-weight:700}text.step.better{fill:#1b8a3f;font-weight:700}
.figrow{display:flex;gap:14px;align-items:center;flex-wrap:wrap}.figrow .meta{min-width:260px;font-size:12px;color:#3b4354}
.legend{font-size:12px;color:#50586a}.legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin:0 4px}
nav a{margin-right:10px}.notes{color:#7a5300}
)";

std::string golden_limit_text(const GoldenMark& g) {
  return "golden " + readable(g.median) + ", limit " + readable(g.limit) + (g.lower_is_better ? " (lower is better)" : " (higher is better)");
}

std::string verdict_block(const json& v, const json& expect) {
  std::string state = str(v, {"state"}, "no evidence");
  bool as_expected = v.is_object() && v.value("as_expected", false);
  std::string out = "<h3>Verdict</h3><p>" + badge(state, status_class(state)) + " ";
  std::string backend = str(v, {"backend"});
  if (!backend.empty()) out += "on <code>" + esc(backend) + "</code> ";
  out += as_expected ? badge("as expected", "ok") : badge("not as expected", "bad");
  out += " &mdash; expected fused attention " +
         std::string(expect.is_object() && expect.value("fused_attention", true) ? "active" : "not active") + " on <code>" +
         esc(str(expect, {"backend"})) + "</code></p>";
  out += "<p>" + esc(str(v, {"explanation"})) + "</p>";
  auto used = strings(v, "levels_used"), unavailable = strings(v, "levels_unavailable");
  out += "<p>Evidence levels used: <b>" + esc(used.empty() ? "none" : join(used, ", ")) + "</b>";
  if (!unavailable.empty()) out += "; unavailable: " + esc(join(unavailable, "; "));
  out += "</p>";
  auto quotes = strings(v, "quotes");
  if (!quotes.empty()) {
    out += "<ul class=\"quotes\">";
    for (const auto& q : quotes) out += "<li><code>" + esc(q) + "</code></li>";
    out += "</ul>";
  }
  return out;
}

std::string case_section(const ReportCase& rc, const std::vector<TrendPoint>* trend, size_t index) {
  const json& r = rc.result;
  const std::string name = str(r, {"case"}, "?"), status = str(r, {"status"}, "?");
  std::string out = "<section class=\"case\" id=\"case-" + std::to_string(index) + "\"><h2>" + esc(name) + " " + badge(status, status_class(status)) +
                    "</h2>";
  out += "<p>" + esc(str(r, {"job"})) + " job &middot; " + esc(str(r, {"runtime", "name"})) + " " + esc(str(r, {"runtime", "build"})) +
         " &middot; flag <code>" + esc(str(r, {"launch", "flag"})) + "</code> &middot; started " + esc(str(r, {"started_utc"})) +
         " &middot; <code>" + esc(rc.result_path) + "</code></p>";
  auto failures = strings(r, "failures");
  if (!failures.empty()) {
    out += "<h3>Why it did not pass</h3><ul>";
    for (const auto& f : failures) out += "<li>" + esc(f) + "</li>";
    out += "</ul>";
  }
  out += verdict_block(r.value("verdict", json::object()), r.value("expect", json::object()));
  const std::string mism = str(r, {"signals", "timed_runs"});
  out += "<p>Cheap signals: evidence pass <code>" + esc(str(r, {"signals", "evidence_pass"})) + "</code>, timed runs <code>" + esc(mism) +
         "</code></p>";
  if (const std::string pc = str(r, {"signals", "probed_check"}); !pc.empty())
    out += "<p>Probed check (the timed configuration once more, with the kernel probe): <code>" + esc(pc) + "</code></p>";

  // The workload a case with workload fields asked for and got (flow/workload_summary.h).
  if (r.contains("workload") && r["workload"].is_object() && !r["workload"].empty()) {
    out += "<h3>Workload</h3><table>";
    for (const auto& [k, v] : r["workload"].items())
      out += "<tr><td>" + esc(k) + "</td><td>" + esc(v.is_string() ? v.get<std::string>() : v.dump()) + "</td></tr>";
    out += "</table>";
  }

  // Figures against the golden.
  out += "<h3>Figures against the golden</h3>";
  if (!rc.golden_note.empty()) out += "<p class=\"notes\">" + esc(rc.golden_note) + "</p>";
  out += "<p class=\"legend\">dots: samples; box: p25&ndash;p75; black tick: median; <i style=\"background:#1b8a3f\"></i>golden median "
         "<i style=\"background:#c62828\"></i>limit (dashed), shaded: tolerance</p>";
  const json figs = r.value("figures", json::object());
  for (const auto& [fname, fig] : figs.items()) {
    auto s = samples_of(fig);
    auto g = rc.golden.find(fname);
    const GoldenMark* gm = g == rc.golden.end() ? nullptr : &g->second;
    out += "<div class=\"figrow\"><div class=\"meta\"><b>" + esc(fname) + "</b>" + (fig.value("gate", false) ? " " + badge("gate", "warn") : "") +
           "<br>p50 " + readable(dbl(fig, "p50")) + " &middot; p95 " + readable(dbl(fig, "p95")) + " &middot; n " + std::to_string(s.size()) +
           (gm ? "<br>" + esc(golden_limit_text(*gm)) : "") + "</div>" + figure_vs_golden_plot(fname, s, gm) + "</div>";
  }
  auto golden_lines = strings(r.value("golden", json::object()), "lines");
  if (!golden_lines.empty()) {
    out += "<details><summary>Golden comparison, line by line (" + esc(str(r, {"golden", "status"})) + ")</summary><pre>";
    for (const auto& l : golden_lines) out += esc(l) + "\n";
    out += "</pre></details>";
  }
  out += "<p>Cold start: ready " + readable(dbl(r.value("cold", json::object()), "ready_ms")) + " ms, first request TTFT " +
         readable(dbl(r.value("cold", json::object()), "first_request_ttft_ms")) + " ms. " + esc(str(r, {"fidelity"})) + "</p>";

  // Memory.
  const json mem = r.value("memory", json::object());
  std::vector<Bar> bars;
  if (mem.contains("kv_buffer_mib") && mem["kv_buffer_mib"].is_object())
    for (const auto& [d, v] : mem["kv_buffer_mib"].items())
      if (v.is_number()) bars.push_back({"KV buffer " + d, "kv", v.get<double>()});
  if (mem.contains("compute_buffer_mib") && mem["compute_buffer_mib"].is_object())
    for (const auto& [d, v] : mem["compute_buffer_mib"].items())
      if (v.is_number()) bars.push_back({"compute buffer " + d, "compute", v.get<double>()});
  if (double rss = dbl(mem, "host_peak_rss_mib"); std::isfinite(rss)) bars.push_back({"host peak RSS", "rss", rss});
  out += "<h3>Memory</h3>";
  if (!bars.empty()) out += bars_plot("memory", name + ": memory", bars);
  out += "<p>GPU: " + esc(str(mem, {"gpu"}, "not measured")) + "</p>";
  {
    std::string why_not;
    const auto room = headroom_from_json(r.value("headroom", json()), &why_not);
    out += "<h3>Headroom</h3><table>";
    for (const auto& [k, v] : headroom_lines(room, why_not)) out += "<tr><td>" + esc(k) + "</td><td>" + esc(v) + "</td></tr>";
    out += "</table>";
  }

  // Answers.
  if (r.contains("answers") && r["answers"].is_array() && !r["answers"].empty()) {
    out += "<h3>Answers</h3><table><tr><th>prompt</th><th>reference</th><th>stable</th><th>answer</th></tr>";
    for (const auto& a : r["answers"]) {
      const std::string ref = str(a, {"reference"});
      out += "<tr><td>" + esc(str(a, {"prompt_id"})) + "</td><td>" + badge(ref, ref == "recorded" ? "ok" : status_class(ref)) + "</td><td>" +
             (a.value("stable", true) ? "yes" : "<b>no</b>") + "</td><td><code>" + esc(str(a, {"text"})) + "</code>";
      if (!str(a, {"diff"}).empty()) out += "<pre>" + esc(str(a, {"diff"})) + "</pre>";
      out += "</td></tr>";
    }
    out += "</table>";
  }

  // Trend.
  if (trend && !trend->empty()) {
    out += "<h3>Trend: " + std::to_string(trend->size()) + (trend->size() == 1 ? " run" : " runs") + " on this machine</h3>";
    std::vector<std::string> shown;
    for (const auto& [fname, fig] : figs.items())
      if (fig.value("gate", false)) shown.push_back(fname);
    for (const char* extra : {"ttft_ms", "tpot_ms", "decode_tokens_per_s", "batch_tokens_per_s"})
      if (figs.contains(extra) && std::find(shown.begin(), shown.end(), extra) == shown.end() && shown.size() < 4) shown.push_back(extra);
    for (const auto& fname : shown) {
      out += "<div class=\"figrow\"><div class=\"meta\"><b>" + esc(fname) + "</b> median per run";
      for (const auto& st : trend_steps(*trend, fname))
        out += "<br>" + esc(st.from_build) + " &rarr; " + esc(st.to_build) + ": " + readable(st.before) + " &rarr; " + readable(st.after) + " (" +
               pct(st.change_rel) + ")";
      out += "</div>" + trend_plot(fname, *trend, lower_is_better(figs[fname])) + "</div>";
    }
  }
  out += "</section>";
  return out;
}

std::string ab_section(const json& ab, const std::string& path, size_t index) {
  const std::string name = str(ab, {"case"}, "?");
  const json decision = ab.value("decision", json::object());
  const int code = decision.value("exit_code", 2);
  const std::string outcome = code == 0 ? "pass" : code == 1 ? "fail" : "incomplete";
  std::string out = "<section class=\"ab\" id=\"ab-" + std::to_string(index) + "\"><h2>A/B: " + esc(name) + " " + badge(outcome, status_class(outcome)) +
                    "</h2><p>" + esc(str(decision, {"text"})) + "</p><p><code>" + esc(path) + "</code></p>";
  const json arms = ab.value("arms", json::object());
  out += "<table><tr><th>arm</th><th>flag</th><th>verdict</th><th>levels</th><th>launches</th><th>signals</th></tr>";
  for (const char* arm : {"off", "on"}) {
    const json a = arms.value(arm, json::object());
    const json ev = a.value("evidence", json::object());
    const std::string verdict = str(ev, {"verdict"}, "no evidence");
    out += std::string("<tr><td><b>") + arm + "</b></td><td><code>" + esc(str(a, {"flag_value"})) + "</code></td><td>" +
           badge(verdict, status_class(verdict)) + (ev.value("as_required", false) ? "" : " " + badge("not as required", "bad")) + "</td><td>" +
           esc(join(strings(ev, "levels_used"), ", ")) + "</td><td class=\"n\">" + std::to_string(a.value("launches", 0)) + "</td><td><code>" +
           esc(str(ev, {"signals"})) + "</code></td></tr>";
  }
  out += "</table>";
  out += "<h3>Distributions, flag off against flag on</h3><p class=\"legend\">every sample of both arms; box: p25&ndash;p75; black tick: median</p>";
  const json figs = ab.value("figures", json::array());
  for (const auto& f : figs) {
    const std::string fname = str(f, {"figure"});
    auto off = samples_of(arms.value("off", json::object()).value("figures", json::object()).value(fname, json::object()));
    auto on = samples_of(arms.value("on", json::object()).value("figures", json::object()).value(fname, json::object()));
    std::string ci;
    if (f.contains("ci95") && f["ci95"].is_array() && f["ci95"].size() == 2 && f["ci95"][0].is_number() && f["ci95"][1].is_number())
      ci = " [" + readable(f["ci95"][0].get<double>()) + ", " + readable(f["ci95"][1].get<double>()) + "]";
    const std::string effect = str(f, {"effect"});
    out += "<div class=\"figrow\"><div class=\"meta\"><b>" + esc(fname) + "</b>" + (f.value("gate", false) ? " " + badge("gate", "warn") : "") +
           "<br>off " + readable(dbl(f, "median_off")) + " &rarr; on " + readable(dbl(f, "median_on")) + " (" +
           (std::isfinite(dbl(f, "diff_rel")) ? pct(dbl(f, "diff_rel")) : std::string("-")) + ")<br>diff " + readable(dbl(f, "diff")) + esc(ci) +
           ", p " + readable(dbl(f, "mann_whitney_p")) + "<br>" +
           badge(effect, effect == "within noise" ? "warn" : effect.find("worse") != std::string::npos ? "bad" : "ok") +
           (f.value("too_few_repetitions", false) ? " " + badge("too few repetitions", "warn") : "") + "</div>" + ab_plot(fname, off, on) + "</div>";
  }
  // Memory per arm.
  std::vector<Bar> bars;
  for (const char* arm : {"off", "on"}) {
    const json m = arms.value(arm, json::object()).value("memory", json::object());
    for (const char* kind : {"kv_buffer_mib", "compute_buffer_mib"})
      if (m.contains(kind) && m[kind].is_object())
        for (const auto& [d, v] : m[kind].items())
          if (v.is_number())
            bars.push_back({std::string(arm) + ": " + (std::string(kind) == "kv_buffer_mib" ? "KV " : "compute ") + d, arm, v.get<double>()});
  }
  out += "<h3>Memory per arm</h3>";
  if (!bars.empty()) out += bars_plot("memory", name + ": memory per arm", bars);
  for (const char* arm : {"off", "on"})
    out += std::string("<p>") + arm + " GPU: " + esc(str(arms.value(arm, json::object()), {"memory", "gpu"}, "not measured")) + "</p>";
  const json mech = ab.value("mechanism", json::array());
  if (!mech.empty()) {
    out += "<h3>Stated mechanism</h3><table><tr><th>figure</th><th>expect</th><th>outcome</th><th>detail</th></tr>";
    for (const auto& m : mech) {
      const std::string o = str(m, {"outcome"});
      out += "<tr><td>" + esc(str(m, {"figure"})) + "</td><td>" + esc(str(m, {"expect"})) + "</td><td>" + badge(o, status_class(o)) + "</td><td>" +
             esc(str(m, {"detail"})) + "</td></tr>";
    }
    out += "</table>";
  }
  out += "<p>Answers: " + esc(str(ab, {"answers", "same_system"})) + "</p></section>";
  return out;
}

// A support matrix (report/matrix_report.h): the table as matrix.txt shows it, a row's colour by
// whether the verdict is what its flag asked for.
std::string matrix_section(const json& m, const std::string& path, size_t index) {
  const int code = m.value("exit_code", 2);
  const std::string outcome = code == 0 ? "as expected" : code == 1 ? "a row failed" : "incomplete";
  std::string out = "<section class=\"matrix\" id=\"matrix-" + std::to_string(index) + "\"><h2>Support matrix: " + esc(str(m, {"case"}, "?")) +
                    " " + badge(outcome, code == 0 ? "ok" : code == 1 ? "bad" : "warn") + "</h2><p>" + esc(str(m, {"runtime", "name"})) + " " +
                    esc(str(m, {"runtime", "version"})) + " &middot; fingerprint <code>" + esc(str(m, {"fingerprint_id"})) +
                    "</code> &middot; fused attention expected with the flag on: <code>" + esc(str(m, {"expect_backend"})) + "</code> &middot; " +
                    esc(join(strings(m, "axes"), "; ")) + " &middot; <code>" + esc(path) + "</code></p>";
  for (const auto& e : strings(m, "errors")) out += "<p class=\"notes\">" + esc(e) + "</p>";
  out += "<table><tr><th>KV (K/V)</th><th>flag</th><th>context</th><th>head</th><th>verdict</th><th>attention nodes</th>"
         "<th>attention kernels</th><th>prompt t/s (runtime)</th><th>(flashproof)</th><th>vs off</th><th>cause / note</th></tr>";
  for (const auto& r : m.value("rows", json::array())) {
    const json shown = r.value("shown", json::object()), speed = r.value("prompt_speed", json::object());
    const std::string row_outcome = str(r, {"outcome"});
    const std::string cls = row_outcome == "ran" ? (r.value("verdict_as_flag", false) ? "ok" : "bad") : row_outcome == "refused" ? "warn" : "bad";
    const double vs_off = dbl(speed, "runtime_vs_flag_off");
    out += "<tr><td><code>" + esc(str(r, {"kv"})) + "</code></td><td>" + esc(str(r, {"flag_value"})) + "</td><td class=\"n\">" +
           esc(str(r, {"context"})) + "</td><td class=\"n\">" + esc(str(r, {"head_size"})) + "</td><td>" + badge(str(shown, {"verdict"}), cls) +
           "</td><td>" + esc(str(shown, {"attention_nodes"})) + "</td><td><code>" + esc(str(shown, {"attention_kernels"})) +
           "</code></td><td class=\"n\">" + readable(dbl(speed, "runtime_tokens_per_s")) + "</td><td class=\"n\">" +
           readable(dbl(speed, "flashproof_tokens_per_s")) + "</td><td class=\"n\">" + (std::isfinite(vs_off) ? readable(vs_off) + "x" : "") +
           "</td><td>" + esc(str(shown, {"note"})) + "</td></tr>";
  }
  out += "</table></section>";
  return out;
}

// The page checks itself (tests/report/render_check.sh reads these attributes in headless
// Chromium): how many plots there are, how many have a drawn area and marks, and any script error.
const char* kSelfCheck = R"(<script>
(function(){var e=[];window.addEventListener('error',function(x){e.push(String(x.message))});
window.addEventListener('load',function(){var p=document.querySelectorAll('svg.plot'),d=0;
for(var i=0;i<p.length;i++){var b=p[i].getBoundingClientRect();if(b.width>0&&b.height>0&&p[i].querySelector('circle,rect,polyline'))d++;}
var h=document.documentElement;h.setAttribute('data-plots',p.length);h.setAttribute('data-plots-drawn',d);
h.setAttribute('data-errors',e.length);h.setAttribute('data-error-text',e.join(' | '));h.setAttribute('data-rendered','yes');});})();
</script>)";

fs::path find_results_root(const fs::path& start) {
  std::error_code ec;
  fs::path p = fs::absolute(start, ec);
  if (fs::is_regular_file(p, ec)) p = p.parent_path();
  for (int i = 0; i < 6 && !p.empty(); ++i) {
    if (fs::is_regular_file(p / "history.tsv", ec)) return p;
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return {};
}

// `file` (ab.json, matrix.json) under `root` (depth <= 4) in folders named `prefix`<UTC stamp>, the
// latest (by folder name) per case; `root` itself when it holds the file.
std::vector<fs::path> latest_files(const fs::path& root, const std::string& file, const std::string& prefix) {
  std::error_code ec;
  if (fs::is_regular_file(root / file, ec)) return {root / file};
  std::map<std::string, fs::path> by_case;
  if (!fs::is_directory(root, ec)) return {};
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it.depth() > 3) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().filename() != file) continue;
    const fs::path folder = it->path().parent_path();
    if (folder.filename().string().rfind(prefix, 0) != 0) continue;
    const std::string case_dir = folder.parent_path().string();
    auto cur = by_case.find(case_dir);
    if (cur == by_case.end() || cur->second.parent_path().filename() < folder.filename()) by_case[case_dir] = it->path();
  }
  std::vector<fs::path> out;
  for (const auto& [k, p] : by_case) out.push_back(p);
  return out;
}

Result<json> read_json(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(path + ": not a JSON object (truncated or corrupt)");
  return j;
}

void load_golden_marks(ReportCase& rc) {
  const std::string dir = str(rc.result, {"golden", "dir"});
  const std::string name = str(rc.result, {"case"});
  if (dir.empty()) {
    rc.golden_note = "no golden was compared (golden status: " + str(rc.result, {"golden", "status"}, "none") + ")";
    return;
  }
  const std::string path = dir + "/" + name + ".json";
  auto g = load_golden(path);
  if (!g) {
    rc.golden_note = "golden thresholds not shown: " + g.error().message;
    return;
  }
  // The limit is the threshold policy's for this run's launches and the case's minimum effect, as
  // the run recorded them (a result file without them, or a golden too small to know its noise,
  // gets no mark for that figure).
  const json figs = rc.result.value("figures", json::object());
  const double launches = dbl(rc.result, "launches", 1);
  for (const auto& [fname, gf] : g->figures) {
    const json fig = figs.value(fname, json::object());
    const FigurePolicy policy{gf.direction, gf.gate, MinEffect{dbl(fig, "min_effect"), std::max(0.0, dbl(fig, "min_effect_floor", 0))}};
    GoldenMark m;
    m.median = gf.median;
    m.lower_is_better = gf.direction == Direction::lower_is_better;
    m.limit = regression_limit(policy, LaunchSpread{gf.median, gf.spread, gf.n}, static_cast<size_t>(std::max(1.0, launches)));
    m.gate = gf.gate;
    if (std::isfinite(m.limit)) rc.golden[fname] = m;
  }
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::vector<TrendStep> trend_steps(const std::vector<TrendPoint>& points, const std::string& figure, size_t window) {
  std::vector<TrendStep> out;
  auto key = [](const TrendPoint& p) { return p.runtime_build.empty() ? p.fingerprint : p.runtime_build; };
  for (size_t i = 1; i < points.size(); ++i) {
    if (key(points[i]) == key(points[i - 1])) continue;
    std::vector<double> before, after;
    for (size_t j = i; j-- > 0 && before.size() < window && key(points[j]) == key(points[i - 1]);)
      if (auto it = points[j].p50.find(figure); it != points[j].p50.end()) before.push_back(it->second);
    for (size_t j = i; j < points.size() && after.size() < window && key(points[j]) == key(points[i]); ++j)
      if (auto it = points[j].p50.find(figure); it != points[j].p50.end()) after.push_back(it->second);
    if (before.empty() || after.empty()) continue;
    TrendStep st;
    st.index = i;
    st.from_build = key(points[i - 1]);
    st.to_build = key(points[i]);
    st.before = median(before);
    st.after = median(after);
    st.change_rel = st.before != 0 ? (st.after - st.before) / std::fabs(st.before) : 0;
    out.push_back(st);
  }
  return out;
}

Result<ReportData> load_report_data(const std::string& path, const std::string& results_root) {
  ReportData d;
  d.source = path;
  d.generated_utc = utc_now();
  std::error_code ec;
  if (!fs::exists(path, ec)) return make_error(path + ": no such file or folder (expected a run folder, a case folder, a fingerprint folder or a results folder)");

  auto results = resolve_results(path);
  if (!results && fs::is_regular_file(fs::path(path) / "history.tsv", ec)) {
    // A results root: the latest run of every case in its history, across fingerprints.
    if (auto history = load_history(path); history) {
      std::vector<std::string> latest;
      for (const auto& name : cases_in_history(*history)) {
        auto runs = runs_of_case(*history, name);
        for (auto it = runs.rbegin(); it != runs.rend(); ++it)
          if (std::string rp = run_dir_path(path, *it) + "/result.json"; fs::is_regular_file(rp, ec)) {
            latest.push_back(rp);
            break;
          }
      }
      if (!latest.empty()) results = latest;
    }
  }
  if (results) {
    for (const auto& rp : *results) {
      auto j = read_json(rp);
      if (!j) {
        d.notes.push_back(j.error().message);
        continue;
      }
      ReportCase rc;
      rc.result = *j;
      rc.result_path = rp;
      load_golden_marks(rc);
      d.cases.push_back(std::move(rc));
    }
  }
  auto load_all = [&](const std::string& file, const std::string& prefix, std::vector<json>& into, std::vector<std::string>& paths) {
    for (const auto& p : latest_files(path, file, prefix)) {
      auto j = read_json(p.string());
      if (!j) {
        d.notes.push_back(j.error().message);
        continue;
      }
      into.push_back(*j);
      paths.push_back(p.string());
    }
  };
  load_all("ab.json", "ab-", d.ab_runs, d.ab_paths);
  load_all("matrix.json", "matrix-", d.matrix_runs, d.matrix_paths);
  if (d.cases.empty() && d.ab_runs.empty() && d.matrix_runs.empty())
    return make_error(path + ": holds no result.json, no ab.json and no matrix.json" + (results ? "" : " (" + results.error().message + ")"));

  const fs::path root = results_root.empty() ? find_results_root(path) : fs::path(results_root);
  if (!root.empty()) {
    d.results_root = root.string();
    auto history = load_history(d.results_root);
    if (!history) {
      d.notes.push_back("trends not shown: " + history.error().message);
    } else {
      for (const auto& rc : d.cases) {
        const std::string name = str(rc.result, {"case"});
        auto runs = runs_of_case(*history, name);
        if (runs.size() > 60) runs.erase(runs.begin(), runs.end() - 60);
        std::vector<TrendPoint> pts;
        size_t unreadable = 0;
        for (const auto& e : runs) {
          auto j = read_json(run_dir_path(d.results_root, e) + "/result.json");
          if (!j) {
            ++unreadable;
            continue;
          }
          TrendPoint p;
          p.finished_utc = e.finished_utc;
          p.fingerprint = e.fingerprint;
          p.status = e.status;
          p.runtime_build = str(*j, {"runtime", "build"});
          if (j->contains("figures") && (*j)["figures"].is_object())
            for (const auto& [fname, fig] : (*j)["figures"].items())
              if (double v = dbl(fig, "p50"); std::isfinite(v)) p.p50[fname] = v;
          pts.push_back(std::move(p));
        }
        if (unreadable) d.notes.push_back(name + ": " + std::to_string(unreadable) + " run(s) in " + history_path(d.results_root) +
                                          " have no readable result.json (removed or corrupt); left out of the trend");
        d.trends[name] = std::move(pts);
      }
    }
  }
  return d;
}

std::string render_html_report(const ReportData& d) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
                    "<title>flashproof report: " + esc(d.source) + "</title><style>" + kStyle + "</style></head><body>";
  size_t pass = 0, fail = 0, other = 0;
  for (const auto& c : d.cases) {
    const std::string s = str(c.result, {"status"});
    (s == "pass" ? pass : s == "fail" ? fail : other)++;
  }
  out += "<header><h1>flashproof report</h1><p>" + esc(d.source) + " &middot; " + std::to_string(d.cases.size()) + " case(s): " +
         std::to_string(pass) + " pass, " + std::to_string(fail) + " fail, " + std::to_string(other) + " incomplete &middot; " +
         std::to_string(d.ab_runs.size()) + " A/B run(s) &middot; " + std::to_string(d.matrix_runs.size()) + " matrix run(s) &middot; generated " + esc(d.generated_utc) + "</p></header><main>";
  if (!d.notes.empty()) {
    out += "<div class=\"notes\"><b>Not everything could be read:</b><ul>";
    for (const auto& n : d.notes) out += "<li>" + esc(n) + "</li>";
    out += "</ul></div>";
  }
  out += "<table><tr><th>case</th><th>status</th><th>verdict</th><th>job</th><th>runtime</th><th>first failure</th></tr>";
  for (size_t i = 0; i < d.cases.size(); ++i) {
    const json& r = d.cases[i].result;
    const std::string s = str(r, {"status"}), v = str(r, {"verdict", "state"}, "no evidence");
    auto failures = strings(r, "failures");
    out += "<tr><td><a href=\"#case-" + std::to_string(i) + "\">" + esc(str(r, {"case"})) + "</a></td><td>" + badge(s, status_class(s)) + "</td><td>" +
           badge(v, status_class(v)) + " " + esc(str(r, {"verdict", "backend"})) + "</td><td>" + esc(str(r, {"job"})) + "</td><td>" +
           esc(str(r, {"runtime", "name"}) + " " + str(r, {"runtime", "build"})) + "</td><td>" + esc(failures.empty() ? "" : failures.front()) +
           "</td></tr>";
  }
  for (size_t i = 0; i < d.ab_runs.size(); ++i)
    out += "<tr><td><a href=\"#ab-" + std::to_string(i) + "\">A/B " + esc(str(d.ab_runs[i], {"case"})) + "</a></td><td colspan=\"5\">" +
           esc(str(d.ab_runs[i], {"decision", "text"})) + "</td></tr>";
  for (size_t i = 0; i < d.matrix_runs.size(); ++i)
    out += "<tr><td><a href=\"#matrix-" + std::to_string(i) + "\">matrix " + esc(str(d.matrix_runs[i], {"case"})) + "</a></td><td colspan=\"5\">" +
           esc(std::to_string(d.matrix_runs[i].value("rows", json::array()).size())) + " combinations: " +
           esc(join(strings(d.matrix_runs[i], "axes"), "; ")) + "</td></tr>";
  out += "</table>";
  for (size_t i = 0; i < d.cases.size(); ++i) {
    auto t = d.trends.find(str(d.cases[i].result, {"case"}));
    out += case_section(d.cases[i], t == d.trends.end() ? nullptr : &t->second, i);
  }
  for (size_t i = 0; i < d.ab_runs.size(); ++i) out += ab_section(d.ab_runs[i], d.ab_paths[i], i);
  for (size_t i = 0; i < d.matrix_runs.size(); ++i) out += matrix_section(d.matrix_runs[i], d.matrix_paths[i], i);
  out += "</main>";
  out += kSelfCheck;
  out += "</body></html>\n";
  return out;
}

}  // namespace fp
