#include "report/html_plots.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "measure/stats.h"
#include "report/html_markup.h"
#include "util/format_number.h"

namespace fp::html {
namespace {

// Deterministic jitter in [-1, 1] for sample i, so dots of equal value do not hide each other.
double jitter(size_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<double>(x % 2001) / 1000.0 - 1.0;
}

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

}  // namespace

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

}  // namespace fp::html
