#include "measure/ab_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <utility>

#include "measure/stats.h"
#include "util/splitmix64.h"

namespace fp {

namespace {

// Upper tail of the standard normal.
double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// Inverse of the standard normal CDF by bisection on normal_sf; plenty for sample-size estimates.
double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    if (1.0 - normal_sf(mid) < p) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

// P(U >= u) under H0 for sample sizes m, n, no ties. The counts of arrangements by U are the
// coefficients of the Gaussian binomial [m + n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i),
// built one factor at a time (every partial product is itself a Gaussian binomial, so coefficients
// stay non-negative up to rounding): O(m^2 n) with m the smaller size.
double exact_upper_tail(size_t m, size_t n, double u) {
  if (m > n) std::swap(m, n);
  std::vector<double> c(m * n + m + 1, 0.0);
  c[0] = 1.0;
  for (size_t i = 1; i <= m; ++i) {
    size_t top = i * n + i;  // degree before dividing
    for (size_t k = top; k >= n + i; --k) c[k] -= c[k - n - i];
    for (size_t k = i; k <= top; ++k) c[k] += c[k - i];
    for (size_t k = i * n + 1; k <= top; ++k) c[k] = 0.0;  // exact division leaves nothing above i * n
  }
  c.resize(m * n + 1);
  double total = std::accumulate(c.begin(), c.end(), 0.0);
  double tail = 0.0;
  auto from = static_cast<size_t>(std::ceil(u));
  for (size_t k = from; k < c.size(); ++k) tail += c[k];
  return tail / total;
}

double resampled_median(const std::vector<double>& x, SplitMix64& rng, std::vector<double>& buf) {
  buf.resize(x.size());
  for (double& v : buf) v = x[rng.below(x.size())];
  return median(buf);
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

const char* to_string(AbVerdict v) {
  return v == AbVerdict::different ? "different" : "within_noise";
}

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney r;
  if (a.empty() || b.empty()) {
    r.u_a = kNoValue;
    r.p = kNoValue;
    return r;
  }
  size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  // Pool, sort, assign average ranks to tie groups, collect the tie term sum(t^3 - t).
  std::vector<std::pair<double, bool>> pooled;  // value, is_from_a
  pooled.reserve(n);
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_a = 0.0, tie_term = 0.0;
  bool ties = false;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    double t = static_cast<double>(j - i);
    double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += avg_rank;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
  r.u_a = rank_sum_a - dn1 * (dn1 + 1.0) / 2.0;
  double u = std::max(r.u_a, dn1 * dn2 - r.u_a);
  if (std::min(n1, n2) <= 8 && !ties) {
    r.exact = true;
    r.p = std::min(1.0, 2.0 * exact_upper_tail(n1, n2, u));
    return r;
  }
  double mu = dn1 * dn2 / 2.0;
  double var = dn1 * dn2 / 12.0 * ((dn + 1.0) - tie_term / (dn * (dn - 1.0)));
  if (!(var > 0.0)) {
    r.p = 1.0;  // every value tied: no evidence of any ordering
    return r;
  }
  double z = (u - mu - 0.5) / std::sqrt(var);
  r.p = std::clamp(2.0 * normal_sf(z), 0.0, 1.0);
  return r;
}

Interval bootstrap_median_diff_ci(const std::vector<double>& a, const std::vector<double>& b,
                                  double confidence, int resamples, uint64_t seed) {
  if (a.empty() || b.empty() || resamples <= 0 || !(confidence > 0.0 && confidence < 1.0))
    return {kNoValue, kNoValue};
  SplitMix64 rng(seed);
  std::vector<double> diffs, buf;
  diffs.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    double ma = resampled_median(a, rng, buf);
    double mb = resampled_median(b, rng, buf);
    diffs.push_back(mb - ma);
  }
  double tail = (1.0 - confidence) / 2.0 * 100.0;
  std::sort(diffs.begin(), diffs.end());
  return {percentile(diffs, tail), percentile(diffs, 100.0 - tail)};
}

size_t min_repetitions_for_alpha(double alpha) {
  // Smallest two-sided exact p with n per arm is 2 / C(2n, n).
  double c = 1.0;  // C(2n, n), built incrementally
  for (size_t n = 1; n < 64; ++n) {
    c = c * static_cast<double>(2 * n) * static_cast<double>(2 * n - 1) /
        (static_cast<double>(n) * static_cast<double>(n));
    if (2.0 / c < alpha) return n;
  }
  return 64;
}

std::optional<size_t> needed_repetitions(double p_sup, double alpha, double power) {
  double delta = p_sup - 0.5;
  if (!(std::fabs(delta) > 1e-12)) return std::nullopt;
  double z = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power);
  double n = std::ceil(z * z / (6.0 * delta * delta));
  size_t floor_n = min_repetitions_for_alpha(alpha);
  if (n >= 1e9) return static_cast<size_t>(1e9);
  return std::max(static_cast<size_t>(n), floor_n);
}

AbResult compare_ab(const std::vector<double>& a, const std::vector<double>& b,
                    const AbOptions& options) {
  AbResult r;
  r.n_a = a.size();
  r.n_b = b.size();
  r.median_a = median(a);
  r.median_b = median(b);
  r.diff = r.median_b - r.median_a;
  r.diff_rel = r.median_a != 0.0 ? r.diff / std::fabs(r.median_a) : kNoValue;
  r.ci = bootstrap_median_diff_ci(a, b, options.confidence, options.resamples, options.seed);
  r.mwu = mann_whitney_u(a, b);
  size_t floor_n = min_repetitions_for_alpha(options.alpha);
  size_t n_min = std::min(r.n_a, r.n_b);
  if (a.empty() || b.empty()) {
    r.too_few_repetitions = true;
    r.explanation = "no comparison: arm " + std::string(a.empty() ? "A" : "B") + " has no samples";
    return r;
  }
  bool ci_has_zero = !(r.ci.low > 0.0 || r.ci.high < 0.0);
  bool significant = r.mwu.p < options.alpha;
  r.verdict = (!ci_has_zero && significant) ? AbVerdict::different : AbVerdict::within_noise;

  double p_sup = 1.0 - r.mwu.u_a / (static_cast<double>(r.n_a) * static_cast<double>(r.n_b));
  r.repetitions_needed = needed_repetitions(p_sup, options.alpha, options.power);
  r.too_few_repetitions =
      n_min < floor_n || (r.verdict == AbVerdict::within_noise && r.repetitions_needed &&
                          n_min < *r.repetitions_needed);

  std::string pct = std::isnan(r.diff_rel) ? "n/a" : format_double(100.0 * r.diff_rel) + "%";
  r.explanation = "B - A = " + format_double(r.diff) + " (" + pct + "), " +
                  format_double(100.0 * options.confidence) + "% CI [" + format_double(r.ci.low) +
                  ", " + format_double(r.ci.high) + "], Mann-Whitney p = " +
                  format_double(r.mwu.p) + ": " +
                  (r.verdict == AbVerdict::different ? "different" : "within noise") + ".";
  if (r.too_few_repetitions) {
    r.explanation += " Too few repetitions (" + std::to_string(n_min) + " per arm): ";
    if (n_min < floor_n)
      r.explanation += "the test cannot reach p < " + format_double(options.alpha) + " with fewer than " +
                       std::to_string(floor_n) + " per arm";
    else
      r.explanation += "resolving a difference this size needs about " +
                       std::to_string(*r.repetitions_needed) + " per arm";
    if (n_min < floor_n && r.repetitions_needed)
      r.explanation += "; this difference needs about " + std::to_string(*r.repetitions_needed);
    r.explanation += ".";
  }
  return r;
}

}  // namespace fp
