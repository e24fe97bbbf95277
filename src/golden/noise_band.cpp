#include "golden/noise_band.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>

#include "figure/figure_registry.h"
#include "measure/stats.h"
#include "util/text.h"

namespace fp {

// The values are the figure registry's (figure/figure_registry.h FigureDef::sitting_sigma; how each
// was measured: bench/calibration.md). A name it does not hold takes kDefaultSittingSigma.
double sitting_sigma_rel(const std::string& figure, SittingScope scope) {
  if (starts_with(figure, "memory.")) return 0;  // memory has its own policy (golden/memory_policy.h)
  const FigureDef* d = figure_def(figure);
  if (!d) return kDefaultSittingSigma;
  return scope == SittingScope::same_gpu ? d->sitting_sigma_same_gpu : d->sitting_sigma;
}

double sitting_prior_df(const std::string& figure, SittingScope scope) {
  if (scope != SittingScope::same_gpu || starts_with(figure, "memory.")) return 0;
  const FigureDef* d = figure_def(figure);
  return d ? d->sitting_prior_df_same_gpu : 0;
}

const char* sitting_sigma_source() { return "between sittings, measured here (bench/sitting_spread.sh)"; }
const char* sitting_sigma_source(const std::string& figure, SittingScope scope) {
  return sitting_prior_df(figure, scope) > 0
             ? "between sittings on the golden's own GPU, measured on the H200 (tests/gpu/llama-cuda/nightly_device.sh)"
             : sitting_sigma_source();
}

NightNoise night_noise(const std::vector<double>& nights, double prior_sigma, double prior_df) {
  NightNoise n;
  std::vector<double> v;
  for (double x : nights)
    if (std::isfinite(x)) v.push_back(x);
  if (v.size() > kNightsWindow) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(kNightsWindow));
  n.nights = v.size();
  if (v.size() < kMinNights) return n;
  std::vector<double> changes;
  for (size_t i = 1; i < v.size(); ++i) changes.push_back(std::fabs(v[i] - v[i - 1]));
  n.nights_sigma = kMadToSigma * median(changes) / std::sqrt(2.0);
  n.sigma = n.nights_sigma;
  double nu = kMadEfficiency * static_cast<double>(v.size() - 1);
  if (prior_df > 0 && std::isfinite(prior_sigma) && prior_sigma > 0) {
    n.sigma = std::sqrt((prior_df * prior_sigma * prior_sigma + nu * n.sigma * n.sigma) / (prior_df + nu));
    nu += prior_df;
    n.pooled = true;
  }
  n.df = nu;
  n.sigma_upper = n.sigma * std::sqrt(nu / boost::math::quantile(boost::math::chi_squared(nu), 1 - kNightsConfidence));
  n.usable = true;
  return n;
}

}  // namespace fp
