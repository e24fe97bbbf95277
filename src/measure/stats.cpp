#include "measure/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace fp {

namespace {

// Percentile over samples already sorted ascending (see percentile()).
double sorted_percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty() || !(q >= 0.0 && q <= 100.0)) return kNoValue;
  double h = static_cast<double>(sorted.size() - 1) * (q / 100.0);
  size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

}  // namespace

double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return sorted_percentile(samples, q);
}

double median(std::vector<double> samples) { return percentile(std::move(samples), 50.0); }

double median_abs_deviation(const std::vector<double>& samples) {
  if (samples.empty()) return kNoValue;
  double m = median(samples);
  std::vector<double> dev;
  dev.reserve(samples.size());
  for (double x : samples) dev.push_back(std::fabs(x - m));
  return median(std::move(dev));
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) {
    s.median = s.p95 = s.p99 = s.mean = s.stddev = s.min = s.max = s.mad = kNoValue;
    return s;
  }
  std::sort(samples.begin(), samples.end());
  double n = static_cast<double>(samples.size());
  s.median = sorted_percentile(samples, 50.0);
  s.p95 = sorted_percentile(samples, 95.0);
  s.p99 = sorted_percentile(samples, 99.0);
  s.min = samples.front();
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double ss = 0.0;
  for (double x : samples) ss += (x - s.mean) * (x - s.mean);
  s.stddev = samples.size() > 1 ? std::sqrt(ss / (n - 1.0)) : 0.0;
  s.mad = median_abs_deviation(samples);
  return s;
}

}  // namespace fp
