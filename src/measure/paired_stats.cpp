#include "measure/paired_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "measure/signed_rank.h"
#include "util/format_number.h"

namespace fp {
namespace {

double mean_of(const std::vector<double>& v) {
  return v.empty() ? kNoValue : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

int trim_count(size_t n, double trim) { return static_cast<int>(std::floor(trim * static_cast<double>(n) + 1e-9)); }

// Whether the position term is fitted: both orders present three times or more, and at least 4
// degrees of freedom left after it.
bool fits_position(size_t n_a_first, size_t n_b_first, double trim) {
  const size_t n = n_a_first + n_b_first;
  const int kept = static_cast<int>(n) - 2 * trim_count(n, trim);
  return n_a_first >= 3 && n_b_first >= 3 && kept - 2 >= 4;
}

// Whether the machine term is fitted as well: both orders twice or more (pairs to take slopes from)
// and at least 4 degrees of freedom left after it and the position term.
bool fits_machine(size_t n_a_first, size_t n_b_first, double trim) {
  const size_t n = n_a_first + n_b_first;
  const int kept = static_cast<int>(n) - 2 * trim_count(n, trim);
  const int position = fits_position(n_a_first, n_b_first, trim) ? 1 : 0;
  return n_a_first >= 2 && n_b_first >= 2 && kept - 1 - position - 1 >= 4;
}

// Theil-Sen: the median of the slopes between every two blocks of the same order.
std::optional<double> theil_sen_slope(const std::vector<BlockValue>& v) {
  std::vector<double> slopes;
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = i + 1; j < v.size(); ++j)
      if (v[i].a_first == v[j].a_first && std::fabs(v[i].machine - v[j].machine) > 1e-9)
        slopes.push_back((v[i].d - v[j].d) / (v[i].machine - v[j].machine));
  if (slopes.empty()) return std::nullopt;
  return median(slopes);
}

// The two-sided p of "the reference is the same in both arms": Yuen's test on the trimmed mean of x.
double machine_arm_p(const std::vector<BlockValue>& v, double trim) {
  std::vector<double> x;
  for (const auto& b : v) x.push_back(b.machine);
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  const int g = trim_count(n, trim);
  const int kept = static_cast<int>(n) - 2 * g;
  if (kept < 2) return kNoValue;
  double sum = 0;
  for (size_t i = static_cast<size_t>(g); i < n - static_cast<size_t>(g); ++i) sum += x[i];
  const double tm = sum / kept;
  std::vector<double> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = std::clamp(x[i], x[static_cast<size_t>(g)], x[n - 1 - static_cast<size_t>(g)]);
  const double mw = mean_of(w);
  double ss = 0;
  for (double y : w) ss += (y - mw) * (y - mw);
  const double se = std::sqrt(ss / (static_cast<double>(kept) * (kept - 1)));
  if (!(se > 0)) return tm == 0 ? 1.0 : 0.0;
  return 2 * (1 - student_t_cdf(std::fabs(tm / se), kept - 1));
}

// The spread of a block's value that the prompts' spread within blocks implies, robustly: per block
// the variance of its prompts' log-ratios about the block mean less each prompt's typical offset (the
// median over blocks), then the median of those over blocks, scaled to a variance by the median of
// chi-square with m - 1 degrees of freedom over m - 1, and divided by the prompts per block m.
// Empty where blocks carry fewer than two prompts, or fewer than three blocks share the same prompts.
template <class ByBlock>
std::optional<double> within_block_sd(const ByBlock& by_block) {
  std::map<std::string, std::vector<double>> offsets;
  size_t m = 0;
  for (const auto& [block, acc] : by_block) {
    if (m == 0) m = acc.r.size();
    if (acc.r.size() != m || m < 2) return std::nullopt;
    const double mean = mean_of(acc.r);
    for (size_t i = 0; i < m; ++i) offsets[acc.prompt[i]].push_back(acc.r[i] - mean);
  }
  if (by_block.size() < 3 || offsets.size() != m) return std::nullopt;
  std::map<std::string, double> typical;
  double typical_mean = 0;
  for (const auto& [prompt, v] : offsets) typical_mean += (typical[prompt] = median(v)) / static_cast<double>(m);
  std::vector<double> variances;
  for (const auto& [block, acc] : by_block) {
    const double mean = mean_of(acc.r);
    double ss = 0;
    for (size_t i = 0; i < m; ++i) {
      const double x = acc.r[i] - mean - (typical[acc.prompt[i]] - typical_mean);
      ss += x * x;
    }
    variances.push_back(ss / static_cast<double>(m - 1));
  }
  const double df = static_cast<double>(m - 1);
  const double chi_median = boost::math::quantile(boost::math::chi_squared_distribution<double>(df), 0.5) / df;
  return std::sqrt(median(variances) / chi_median / static_cast<double>(m));
}

}  // namespace

double PairedEstimate::worse_rel() const { return std::expm1(worse_log); }
double PairedEstimate::low_rel() const { return std::expm1(low_log); }
double PairedEstimate::high_rel() const { return std::expm1(high_log); }

std::vector<BlockValue> PairedEstimate::bursts() const {
  std::vector<BlockValue> out;
  for (const auto& b : block_values)
    if (b.burst) out.push_back(b);
  return out;
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0) || !std::isfinite(df)) return kNoValue;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  return boost::math::cdf(boost::math::students_t_distribution<double>(df), t);
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0) || !std::isfinite(df)) return kNoValue;
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

int paired_df(int blocks, double trim, bool machine) {
  if (blocks < 2) return 0;
  const size_t n = static_cast<size_t>(blocks);
  const int kept = blocks - 2 * trim_count(n, trim);
  return kept - 1 - (fits_position(n / 2 + n % 2, n / 2, trim) ? 1 : 0) -
         (machine && fits_machine(n / 2 + n % 2, n / 2, trim) ? 1 : 0);
}

PairedEstimate estimate_paired(const std::vector<PairedUnit>& units, bool lower_is_better, double confidence, double trim,
                               bool within_floor) {
  PairedEstimate e;
  struct Acc {
    bool a_first = true;
    std::vector<double> r, la, lb;
    std::vector<std::string> prompt;  // beside r
    double machine = kNoValue;  // the block's x (its launches carry one reference each)
  };
  std::map<int, Acc> by_block;
  for (const auto& u : units) {
    if (!(std::isfinite(u.a) && std::isfinite(u.b) && u.a > 0 && u.b > 0)) continue;
    const double r = std::log(u.b / u.a);
    Acc& acc = by_block[u.block];
    acc.a_first = u.a_first;
    acc.r.push_back(lower_is_better ? r : -r);
    acc.prompt.push_back(u.prompt);
    acc.la.push_back(std::log(u.a));
    acc.lb.push_back(std::log(u.b));
    if (std::isfinite(u.machine_a) && std::isfinite(u.machine_b) && u.machine_a > 0 && u.machine_b > 0)
      acc.machine = std::log(u.machine_b / u.machine_a);
    ++e.units;
  }
  e.blocks = by_block.size();
  if (e.blocks == 0) return e;
  size_t n_a_first = 0;
  bool every_machine = true;
  for (const auto& [block, acc] : by_block) {
    BlockValue v;
    v.block = block;
    v.a_first = acc.a_first;
    v.d = mean_of(acc.r);
    v.a = std::exp(mean_of(acc.la));
    v.b = std::exp(mean_of(acc.lb));
    v.machine = acc.machine;
    every_machine = every_machine && std::isfinite(v.machine);
    n_a_first += v.a_first ? 1 : 0;
    e.block_values.push_back(v);
  }
  const size_t n = e.blocks;
  const int g = trim_count(n, trim);
  e.trimmed_each_end = g;
  // The machine term (see the file comment), from the unadjusted block values.
  double beta = 0;
  if (every_machine && fits_machine(n_a_first, n - n_a_first, trim)) {
    const double p = machine_arm_p(e.block_values, trim);
    const auto slope = theil_sen_slope(e.block_values);
    if (std::isfinite(p) && p < kMachineArmP) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "machine term left out: the reference differs between the arms (two-sided p %.2g)", p);
      e.machine_note = buf;
    } else if (slope) {
      e.machine_term = true;
      beta = std::max(0.0, *slope);
      e.machine_slope = beta;
    }
  }
  std::vector<double> first_a, first_b;  // block values by order, less the machine term
  for (const auto& v : e.block_values) (v.a_first ? first_a : first_b).push_back(v.d - (e.machine_term ? beta * v.machine : 0.0));
  // The position term: least squares without trimming; with it, from the medians of the two orders
  // (a mean of four blocks would carry a burst into every adjusted value).
  double gamma = 0;
  if (fits_position(first_a.size(), first_b.size(), trim)) {
    e.order_term = true;
    gamma = g == 0 ? 0.5 * (mean_of(first_a) - mean_of(first_b)) : 0.5 * (median(first_a) - median(first_b));
    e.order_log = gamma;  // A first means B second: a worse second launch raises d
  }
  std::vector<double> adj;
  for (auto& v : e.block_values) {
    v.adjusted = v.d - (e.machine_term ? beta * v.machine : 0.0) - (v.a_first ? gamma : -gamma);
    adj.push_back(v.adjusted);
  }
  // Bursts: far from the others by the modified z-score (Iglewicz and Hoaglin).
  if (n >= 3) {
    const double med = median(adj), mad = median_abs_deviation(adj);
    if (mad > 0)
      for (auto& v : e.block_values) v.burst = 0.6745 * std::fabs(v.adjusted - med) / mad > kBurstZ;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return adj[x] < adj[y]; });
  for (int i = 0; i < g; ++i) {
    e.block_values[order[static_cast<size_t>(i)]].trimmed = true;
    e.block_values[order[n - 1 - static_cast<size_t>(i)]].trimmed = true;
  }
  const int kept = static_cast<int>(n) - 2 * g;
  double sum = 0;
  for (size_t i = static_cast<size_t>(g); i < n - static_cast<size_t>(g); ++i) sum += adj[order[i]];
  e.worse_log = sum / kept;
  e.df = kept - 1 - (e.order_term ? 1 : 0) - (e.machine_term ? 1 : 0);
  if (e.df < 1) return e;
  // Winsorized sum of squares: the trimmed values replaced by the nearest kept one.
  std::vector<double> w(n);
  const double lo = adj[order[static_cast<size_t>(g)]], hi = adj[order[n - 1 - static_cast<size_t>(g)]];
  for (size_t i = 0; i < n; ++i) w[i] = std::clamp(adj[i], lo, hi);
  const double mw = mean_of(w);
  double ss = 0;
  for (double x : w) ss += (x - mw) * (x - mw);
  // Yuen: se^2 = SS_w / (h (h - 1)); with the position term its degree of freedom comes off (at
  // g = 0 this is the least-squares se of theta for a balanced design).
  e.se_log = std::sqrt(ss / (static_cast<double>(kept) * e.df));
  // The floor from the prompts' spread within blocks (see the file comment): robust like the rest,
  // so that a burst that hit one request does not raise it for every block.
  if (const auto within = within_floor ? within_block_sd(by_block) : std::nullopt) {
    e.within_sd_log = *within;
    e.se_floor_log = *within / std::sqrt(static_cast<double>(n));
    e.se_log = std::max(e.se_log, e.se_floor_log);
  }
  e.block_sd_log = e.se_log * std::sqrt(static_cast<double>(n));
  // 1.03: the trimmed mean's standard error on normal data is about 3% above the mean's.
  e.forecast_sd_log = std::min(e.block_sd_log, 1.03 * kMadToSigma * median_abs_deviation(adj));
  if (std::isfinite(e.within_sd_log)) e.forecast_sd_log = std::max(e.forecast_sd_log, e.within_sd_log);
  const double t = student_t_quantile(0.5 + confidence / 2, e.df);
  e.low_log = e.worse_log - t * e.se_log;
  e.high_log = e.worse_log + t * e.se_log;
  if (e.se_log > 0)
    e.p_worse = 1 - student_t_cdf(e.worse_log / e.se_log, e.df);
  else
    e.p_worse = e.worse_log > 0 ? 0.0 : 1.0;
  return e;
}

std::optional<int> blocks_to_decide(const PairedEstimate& e, double min_effect, double alpha_look, double trim,
                                    double regression_share, int limit) {
  if (!std::isfinite(e.forecast_sd_log) || !std::isfinite(e.worse_log)) return std::nullopt;
  const double dl = std::log1p(min_effect), dr = std::log1p(regression_share * min_effect), theta = e.worse_log;
  // No regression needs the decision bound's half-width below d - theta; regression needs it below
  // theta - the regression bound. The half-width at n blocks: t(1 - alpha, df(n)) sd / sqrt(n).
  const int from = static_cast<int>(e.blocks) + 2 - static_cast<int>(e.blocks % 2);
  for (int n = std::max(from, 4); n <= limit; n += 2) {
    const double half = student_t_quantile(1 - alpha_look, paired_df(n, trim, e.machine_term)) * e.forecast_sd_log / std::sqrt(static_cast<double>(n));
    if (theta < dl && half < dl - theta) return n;
    if (theta > dr && half < theta - dr) return n;
  }
  return std::nullopt;
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
    d.effect_note = f.effect_note;
    d.estimate = estimate_paired(f.units, f.lower_is_better, o.confidence, o.trim, o.within_floor);
    // "Regression" is tested against the regression bound, not against no change: a true change
    // below it must not be called a regression however many blocks run.
    const PairedEstimate& e = d.estimate;
    const double bound = std::log1p(o.regression_share * f.min_effect);
    double pr = kNoValue;
    if (std::isfinite(e.se_log) && e.df >= 1)
      pr = e.se_log > 0 ? 1 - student_t_cdf((e.worse_log - bound) / e.se_log, e.df) : (e.worse_log > bound ? 0.0 : 1.0);
    d.p_regression = pr;
    std::vector<double> adjusted_values;
    for (const auto& b : e.block_values) adjusted_values.push_back(b.adjusted);
    if (!adjusted_values.empty()) d.p_rank = signed_rank_p_above(adjusted_values, bound);
    p.push_back(pr);
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
    } else if (d.p_holm < o.alpha_look && d.p_rank <= o.rank_alpha * (1 + 1e-9)) {
      d.verdict = TimingVerdict::regression;
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "worse than %s beyond noise (Holm-adjusted one-sided p %.2g < %.3g per look; signed-rank p %.2g <= %.3g)",
                    pct(o.regression_share * d.min_effect).c_str(), d.p_holm, o.alpha_look, d.p_rank, o.rank_alpha);
      d.why = buf;
    } else if (d.p_holm < o.alpha_look) {
      d.verdict = TimingVerdict::unresolved;
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "the trimmed mean is worse than %s (Holm p %.2g), but the blocks' signed ranks are not convincing "
                    "(p %.2g > %.3g): a few clustered blocks carry it",
                    pct(o.regression_share * d.min_effect).c_str(), d.p_holm, d.p_rank, o.rank_alpha);
      d.why = buf;
    } else {
      d.verdict = TimingVerdict::unresolved;
      d.why = "the interval straddles the minimum effect";
    }
    if (d.verdict != TimingVerdict::unresolved) {
      d.likely_blocks = static_cast<int>(e.blocks);
    } else {
      if (auto need = blocks_to_decide(e, d.min_effect, o.alpha_look, o.trim, o.regression_share)) {
        d.likely_blocks = *need;
        d.more_blocks = *need - static_cast<int>(e.blocks);
      }
      // One standard error toward "no regression" and toward "regression": the nearer decision.
      for (double step : {-e.se_log, e.se_log}) {
        PairedEstimate luckier = e;
        luckier.worse_log += step;
        if (auto need = blocks_to_decide(luckier, d.min_effect, o.alpha_look, o.trim, o.regression_share))
          d.hopeful_blocks = d.hopeful_blocks ? std::min(*d.hopeful_blocks, *need) : *need;
      }
    }
  }
  return out;
}

int next_look(int blocks, int first) {
  if (blocks < first) return first;
  if (blocks < kDenseLooksUpTo) return blocks + 2 - blocks % 2;
  const int grown = static_cast<int>(std::ceil(blocks * 1.2));
  return grown + grown % 2;
}

namespace {
std::optional<int> most_blocks(const std::vector<FigureDecision>& decisions, std::optional<int> FigureDecision::*forecast) {
  int most = 0;
  for (const auto& d : decisions) {
    if (d.verdict != TimingVerdict::unresolved) continue;
    if (!(d.*forecast)) return std::nullopt;
    most = std::max(most, *(d.*forecast));
  }
  return most;
}
}  // namespace

std::optional<int> likely_blocks(const std::vector<FigureDecision>& decisions) { return most_blocks(decisions, &FigureDecision::likely_blocks); }

std::optional<int> hopeful_blocks(const std::vector<FigureDecision>& decisions) { return most_blocks(decisions, &FigureDecision::hopeful_blocks); }

bool beyond_budget(const std::vector<FigureDecision>& decisions, int blocks, int affordable, int from_blocks, double factor) {
  const bool unresolved = std::any_of(decisions.begin(), decisions.end(),
                                      [](const FigureDecision& d) { return d.verdict == TimingVerdict::unresolved; });
  if (!unresolved || blocks < from_blocks) return false;
  const std::optional<int> need = hopeful_blocks(decisions);
  return !need || *need > factor * affordable;
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
  if (e.trimmed_each_end > 0)
    s += " (trimmed mean: " + std::to_string(e.trimmed_each_end) + " block" + (e.trimmed_each_end > 1 ? "s" : "") +
         " dropped at each end)";
  if (std::isfinite(e.se_floor_log) && e.se_floor_log >= e.se_log) s += " (standard error floored by the prompts' spread within blocks)";
  if (e.machine_term) {
    char m[120];
    std::snprintf(m, sizeof m, " (machine term: the machine reference's change x %.2f taken out)", e.machine_slope);
    s += m;
  } else if (!e.machine_note.empty()) {
    s += " (" + e.machine_note + ")";
  }
  s += "; " + d.why;
  if (d.verdict == TimingVerdict::unresolved && d.more_blocks)
    s += "; about " + std::to_string(*d.more_blocks) + " more blocks would likely settle it";
  return s;
}

}  // namespace fp
