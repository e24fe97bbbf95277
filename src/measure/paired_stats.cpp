#include "measure/paired_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

namespace fp {
namespace {

// Continued fraction of the regularized incomplete beta function (Lentz's method, as in Numerical
// Recipes' betacf); converges fast for x < (a + 1) / (a + b + 2).
double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return h;
}

// I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double mean_of(const std::vector<double>& v) {
  return v.empty() ? kNoValue : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::string pct(double rel) {
  if (!std::isfinite(rel)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * rel);
  return buf;
}

}  // namespace

double PairedEstimate::worse_rel() const { return std::expm1(worse_log); }
double PairedEstimate::low_rel() const { return std::expm1(low_log); }
double PairedEstimate::high_rel() const { return std::expm1(high_log); }

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNoValue;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  const double x = df / (df + t * t);
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, x);  // P(T > |t|)
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return kNoValue;
  // Bisection on the CDF: monotone, and 200 halvings of [-1e6, 1e6] are far below double precision.
  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

PairedEstimate estimate_paired(const std::vector<PairedUnit>& units, bool lower_is_better, double confidence) {
  PairedEstimate e;
  std::map<int, std::vector<double>> by_block;
  std::map<int, bool> a_first;
  for (const auto& u : units) {
    if (!(std::isfinite(u.a) && std::isfinite(u.b) && u.a > 0 && u.b > 0)) continue;
    const double r = std::log(u.b / u.a);
    by_block[u.block].push_back(lower_is_better ? r : -r);
    a_first[u.block] = u.a_first;
    ++e.units;
  }
  e.blocks = by_block.size();
  if (e.blocks == 0) return e;
  std::vector<double> first_a, first_b;  // block values by order
  for (const auto& [block, rs] : by_block) (a_first[block] ? first_a : first_b).push_back(mean_of(rs));
  const size_t n = e.blocks;
  double var_theta = kNoValue;
  // The position term costs a degree of freedom: fitted from three blocks of each order on (df >= 4).
  // With four blocks it would leave df = 2, whose variance estimate can come out tiny by chance and
  // turn a run of same-sign blocks into a "regression" (an A/A CTest run did: +4.0%, p 0.004).
  if (first_a.size() >= 3 && first_b.size() >= 3) {
    const double ma = mean_of(first_a), mb = mean_of(first_b);
    e.order_term = true;
    e.worse_log = 0.5 * (ma + mb);
    e.order_log = 0.5 * (ma - mb);  // A first means B second: a worse second launch raises d
    double ss = 0;
    for (double d : first_a) ss += (d - ma) * (d - ma);
    for (double d : first_b) ss += (d - mb) * (d - mb);
    e.df = static_cast<int>(n) - 2;
    const double s2 = ss / e.df;
    e.block_sd_log = std::sqrt(s2);
    var_theta = 0.25 * s2 * (1.0 / static_cast<double>(first_a.size()) + 1.0 / static_cast<double>(first_b.size()));
  } else {
    std::vector<double> all = first_a;
    all.insert(all.end(), first_b.begin(), first_b.end());
    e.worse_log = mean_of(all);
    if (n < 2) return e;
    double ss = 0;
    for (double d : all) ss += (d - e.worse_log) * (d - e.worse_log);
    e.df = static_cast<int>(n) - 1;
    const double s2 = ss / e.df;
    e.block_sd_log = std::sqrt(s2);
    var_theta = s2 / static_cast<double>(n);
  }
  e.se_log = std::sqrt(var_theta);
  const double t = student_t_quantile(0.5 + confidence / 2, e.df);
  e.low_log = e.worse_log - t * e.se_log;
  e.high_log = e.worse_log + t * e.se_log;
  if (e.se_log > 0)
    e.p_worse = 1 - student_t_cdf(e.worse_log / e.se_log, e.df);
  else
    e.p_worse = e.worse_log > 0 ? 0.0 : 1.0;
  return e;
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> out(p.size(), kNoValue);
  const size_t m = idx.size();
  double running = 0;
  for (size_t k = 0; k < m; ++k) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - k) * p[idx[k]]));
    out[idx[k]] = running;
  }
  return out;
}

const char* to_string(TimingVerdict v) {
  switch (v) {
    case TimingVerdict::regression: return "regression";
    case TimingVerdict::no_regression: return "no regression";
    case TimingVerdict::unresolved: return "unresolved";
  }
  return "?";
}

std::vector<FigureDecision> decide_figures(const std::vector<FigureInput>& figures, const DecisionOptions& o) {
  std::vector<FigureDecision> out;
  std::vector<double> p;
  for (const auto& f : figures) {
    FigureDecision d;
    d.figure = f.figure;
    d.lower_is_better = f.lower_is_better;
    d.min_effect = f.min_effect;
    d.estimate = estimate_paired(f.units, f.lower_is_better, o.confidence);
    p.push_back(d.estimate.p_worse);
    out.push_back(std::move(d));
  }
  const std::vector<double> adjusted = holm_adjust(p);
  for (size_t i = 0; i < out.size(); ++i) {
    FigureDecision& d = out[i];
    const PairedEstimate& e = d.estimate;
    d.p_holm = adjusted[i];
    const double dl = std::log1p(d.min_effect);
    if (e.blocks < static_cast<size_t>(std::max(o.min_blocks, 2)) || !std::isfinite(e.se_log)) {
      d.verdict = TimingVerdict::unresolved;
      d.why = "too few blocks (" + std::to_string(e.blocks) + " of at least " + std::to_string(o.min_blocks) + ")";
      d.more_blocks = std::max(o.min_blocks, 2) - static_cast<int>(e.blocks);
      continue;
    }
    const double t_look = student_t_quantile(1 - o.alpha_look, e.df);
    const double upper = e.worse_log + t_look * e.se_log;
    const double lower = e.worse_log - t_look * e.se_log;
    if (upper < dl) {
      d.verdict = TimingVerdict::no_regression;
      d.why = lower > 0 ? "slower, but by less than the minimum effect"
              : upper < 0 ? "faster beyond noise"
                          : "any change is smaller than the minimum effect";
    } else if (d.p_holm < o.alpha_look && e.worse_log >= dl / 2) {
      d.verdict = TimingVerdict::regression;
      char buf[96];
      std::snprintf(buf, sizeof buf, "worse beyond noise (Holm-adjusted one-sided p %.2g < %.3g per look)", d.p_holm,
                    o.alpha_look);
      d.why = buf;
    } else {
      d.verdict = TimingVerdict::unresolved;
      // Blocks for the decision bound to settle either way at the observed spread: its half-width
      // shrinks as 1/sqrt(n). No regression needs half-width < d - theta; regression needs it < theta.
      const double half_per_block = (upper - e.worse_log) * std::sqrt(static_cast<double>(e.blocks));
      double need = 1e9;
      if (e.worse_log < dl) need = std::min(need, std::pow(half_per_block / (dl - e.worse_log), 2));
      if (e.worse_log > dl / 2) need = std::min(need, std::pow(half_per_block / e.worse_log, 2));
      if (need < 1e8) {
        int more = static_cast<int>(std::ceil(need)) - static_cast<int>(e.blocks);
        more = std::max(2, more + (more % 2));
        d.more_blocks = more;
      }
      d.why = "the interval straddles the minimum effect";
    }
  }
  return out;
}

std::string decision_line(const FigureDecision& d, const std::string& b_name) {
  const PairedEstimate& e = d.estimate;
  char buf[400];
  std::snprintf(buf, sizeof buf, "%s: %s: %s %s %s (95%% CI %s .. %s), Holm p %.3g, %zu blocks, minimum effect %.0f%%",
                d.figure.c_str(), to_string(d.verdict), b_name.c_str(), e.worse_log > 0 ? "worse by" : "better by",
                pct(e.worse_rel()).c_str(), pct(e.low_rel()).c_str(), pct(e.high_rel()).c_str(), d.p_holm, e.blocks,
                100.0 * d.min_effect);
  std::string s = buf;
  s += "; " + d.why;
  if (d.verdict == TimingVerdict::unresolved && d.more_blocks)
    s += "; about " + std::to_string(*d.more_blocks) + " more blocks would likely settle it";
  return s;
}

}  // namespace fp
