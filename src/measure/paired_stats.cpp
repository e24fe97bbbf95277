#include "measure/paired_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include <boost/math/distributions/students_t.hpp>

#include "util/format_number.h"

namespace fp {
namespace {

double mean_of(const std::vector<double>& v) {
  return v.empty() ? kNoValue : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The first scheduled look after `blocks` at which the decision bound would be met if theta and the
// block spread stayed as they are (FigureDecision::likely_blocks).
std::optional<int> forecast_look(const PairedEstimate& e, double min_effect, const LookSchedule& schedule) {
  if (!std::isfinite(e.block_sd_log) || !std::isfinite(e.worse_log)) return std::nullopt;
  const double dl = std::log1p(min_effect), dr = std::log1p(kRegressionShare * min_effect), theta = e.worse_log;
  for (int n : schedule.looks) {
    if (n <= static_cast<int>(e.blocks)) continue;
    const double se = e.block_sd_log / std::sqrt(static_cast<double>(n));
    if (theta + student_t_quantile(1 - schedule.alpha_no_regression, n - 2) * se < dl ||
        theta - student_t_quantile(1 - schedule.alpha_regression, n - 2) * se > dr)
      return n;
  }
  return std::nullopt;
}

}  // namespace

int first_look(int first) { return std::max(4, first + first % 2); }

LookSchedule::LookSchedule(int first, int last) {
  const int start = first_look(first);
  const int end = last - last % 2;
  if (start > end) return;
  looks.push_back(start);
  for (int p = 4; p < end; p *= 2)
    for (int n : {p, p + p / 2})
      if (n > start && n < end) looks.push_back(n);
  if (end > start) looks.push_back(end);
  std::sort(looks.begin(), looks.end());
  alpha_regression = kAlphaRegression / static_cast<double>(looks.size());
  alpha_no_regression = kAlphaNoRegression / static_cast<double>(looks.size());
}

bool LookSchedule::is_look(int blocks) const { return std::binary_search(looks.begin(), looks.end(), blocks); }

std::optional<int> LookSchedule::next_after(int blocks) const {
  auto it = std::upper_bound(looks.begin(), looks.end(), blocks);
  if (it == looks.end()) return std::nullopt;
  return *it;
}

double PairedEstimate::worse_rel() const { return std::expm1(worse_log); }
double PairedEstimate::low_rel() const { return std::expm1(low_log); }
double PairedEstimate::high_rel() const { return std::expm1(high_log); }

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0) || !std::isfinite(df)) return kNoValue;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  return boost::math::cdf(boost::math::students_t_distribution<double>(df), t);
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0) || !std::isfinite(df)) return kNoValue;
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

PairedEstimate estimate_paired(const std::vector<PairedUnit>& units, bool lower_is_better, double confidence) {
  PairedEstimate e;
  struct Acc {
    bool a_first = true;
    std::vector<double> r, la, lb, machine;
  };
  std::map<int, Acc> by_block;
  for (const auto& u : units) {
    if (!(std::isfinite(u.a) && std::isfinite(u.b) && u.a > 0 && u.b > 0)) continue;
    const double r = std::log(u.b / u.a);
    Acc& acc = by_block[u.block];
    acc.a_first = u.a_first;
    acc.r.push_back(lower_is_better ? r : -r);
    acc.la.push_back(std::log(u.a));
    acc.lb.push_back(std::log(u.b));
    if (std::isfinite(u.machine_a) && std::isfinite(u.machine_b) && u.machine_a > 0 && u.machine_b > 0)
      acc.machine.push_back(std::log(u.machine_b / u.machine_a));
    ++e.units;
  }
  e.blocks = by_block.size();
  if (e.blocks == 0) return e;
  std::vector<double> d, s, machine;
  for (const auto& [block, acc] : by_block) {
    BlockValue v;
    v.block = block;
    v.a_first = acc.a_first;
    v.d = mean_of(acc.r);
    v.a = std::exp(mean_of(acc.la));
    v.b = std::exp(mean_of(acc.lb));
    v.machine = acc.machine.empty() ? kNoValue : acc.machine.front();
    if (std::isfinite(v.machine)) machine.push_back(v.machine);
    d.push_back(v.d);
    s.push_back(v.a_first ? 1.0 : -1.0);
    e.block_values.push_back(v);
  }
  e.machine_log = mean_of(machine);
  // Least squares of d on (1, s). With the orders balanced (every look), s sums to 0 and theta is
  // the plain mean; between looks (an odd block) the general solution.
  const double n = static_cast<double>(e.blocks);
  const double sd_ = std::accumulate(d.begin(), d.end(), 0.0), ss = std::accumulate(s.begin(), s.end(), 0.0);
  double sds = 0;
  for (size_t i = 0; i < d.size(); ++i) sds += s[i] * d[i];
  const double det = n * n - ss * ss;  // n * sum(s^2) - sum(s)^2, s^2 = 1
  if (e.blocks < 3 || det <= 0) {
    // Too few blocks, or every block in the same order: no position term, no interval.
    e.worse_log = sd_ / n;
    for (size_t i = 0; i < d.size(); ++i) e.block_values[i].residual = d[i] - e.worse_log;
    return e;
  }
  const double gamma = (n * sds - ss * sd_) / det;
  e.worse_log = (sd_ - gamma * ss) / n;
  e.order_log = gamma;  // A first means B second: a worse second launch raises d
  double rss = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const double res = d[i] - e.worse_log - gamma * s[i];
    e.block_values[i].residual = res;
    rss += res * res;
  }
  e.df = static_cast<int>(e.blocks) - 2;
  e.block_sd_log = std::sqrt(rss / e.df);
  // Var(theta) = sigma^2 * sum(s^2) / det = sigma^2 * n / det (= sigma^2 / n when balanced).
  e.se_log = e.block_sd_log * std::sqrt(n / det);
  const double t = student_t_quantile(0.5 + confidence / 2, e.df);
  e.low_log = e.worse_log - t * e.se_log;
  e.high_log = e.worse_log + t * e.se_log;
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

std::vector<FigureDecision> decide_figures(const std::vector<FigureInput>& figures, const LookSchedule& schedule) {
  std::vector<FigureDecision> out;
  std::vector<double> p;
  for (const auto& f : figures) {
    FigureDecision d;
    d.figure = f.figure;
    d.lower_is_better = f.lower_is_better;
    d.min_effect = f.min_effect;
    d.effect_note = f.effect_note;
    d.alpha_regression = schedule.alpha_regression;
    d.alpha_no_regression = schedule.alpha_no_regression;
    d.estimate = estimate_paired(f.units, f.lower_is_better);
    const PairedEstimate& e = d.estimate;
    // "Regression" is tested against the regression bound, not against no change: a true change
    // below it must not be called a regression however many blocks run.
    const double bound = std::log1p(kRegressionShare * f.min_effect);
    if (e.df >= 1 && std::isfinite(e.se_log)) {
      d.p_regression = e.se_log > 0 ? 1 - student_t_cdf((e.worse_log - bound) / e.se_log, e.df) : (e.worse_log > bound ? 0.0 : 1.0);
      d.upper_log = e.worse_log + student_t_quantile(1 - d.alpha_no_regression, e.df) * e.se_log;
    }
    p.push_back(d.p_regression);
    out.push_back(std::move(d));
  }
  const std::vector<double> adjusted = holm_adjust(p);
  for (size_t i = 0; i < out.size(); ++i) {
    FigureDecision& d = out[i];
    const PairedEstimate& e = d.estimate;
    d.p_holm = adjusted[i];
    if (!std::isfinite(d.upper_log)) {
      d.why = "too few blocks (" + std::to_string(e.blocks) + "; the first look is after " +
              std::to_string(schedule.looks.empty() ? 4 : schedule.looks.front()) + ")";
    } else if (d.upper_log < std::log1p(d.min_effect)) {
      d.verdict = TimingVerdict::no_regression;
      const double lower = e.worse_log - (d.upper_log - e.worse_log);
      d.why = lower > 0         ? "slower, but by less than the minimum effect"
              : d.upper_log < 0 ? "faster beyond noise"
                                : "any change is smaller than the minimum effect";
    } else if (d.p_holm < d.alpha_regression) {
      d.verdict = TimingVerdict::regression;
      char buf[200];
      std::snprintf(buf, sizeof buf, "worse than %s beyond noise (Holm-adjusted one-sided p %.2g < %.3g at this look)",
                    pct(kRegressionShare * d.min_effect).c_str(), d.p_holm, d.alpha_regression);
      d.why = buf;
    } else {
      d.why = "the interval straddles the minimum effect";
    }
    if (d.verdict == TimingVerdict::unresolved)
      d.likely_blocks = forecast_look(e, d.min_effect, schedule);
    else
      d.likely_blocks = static_cast<int>(e.blocks);
  }
  return out;
}

std::string decision_line(const FigureDecision& d, const std::string& b_name) {
  const PairedEstimate& e = d.estimate;
  char buf[400];
  std::snprintf(buf, sizeof buf, "%s: %s: %s %s %s (95%% CI %s .. %s), Holm p %.3g, %zu blocks, minimum effect %.3g%%",
                d.figure.c_str(), to_string(d.verdict), b_name.c_str(), e.worse_log > 0 ? "worse by" : "better by",
                pct(e.worse_rel()).c_str(), pct(e.low_rel()).c_str(), pct(e.high_rel()).c_str(), d.p_holm, e.blocks,
                100.0 * d.min_effect);
  std::string s = buf;
  if (!d.effect_note.empty()) s += " (" + d.effect_note + ")";
  s += "; " + d.why;
  if (d.verdict == TimingVerdict::unresolved && d.likely_blocks)
    s += "; about " + std::to_string(*d.likely_blocks - static_cast<int>(e.blocks)) + " more blocks would likely settle it";
  return s;
}

}  // namespace fp
