// Descriptive statistics for one figure's repetitions: medians first, a slow percentile, and a
// robust spread (MAD). Definitions match the tools users compare against (docs/runtimes.md section 5).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace fp {

// MAD * kMadToSigma estimates the standard deviation of normally distributed samples.
inline constexpr double kMadToSigma = 1.482602218505602;
// What a statistic of no samples is.
inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// Aggregates of one figure's samples. With n == 0 every field but n is NaN.
struct Summary {
  size_t n = 0;
  double median = kNoValue;  // percentile 50
  double p95 = kNoValue;
  double p99 = kNoValue;
  double mean = kNoValue;
  double stddev = kNoValue;  // sample standard deviation (n - 1 denominator, as google/benchmark); 0 when n == 1
  double min = kNoValue;
  double max = kNoValue;
  double mad = kNoValue;     // median absolute deviation from the median, raw (not scaled by kMadToSigma)
};

// Percentile q in percent (0..100) with linear interpolation between order statistics: numpy's
// default method 'linear' (Hyndman & Fan type 7): h = (n - 1) * q / 100,
// result = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]) over the sorted samples.
// NaN when samples is empty or q is outside [0, 100] or NaN. Samples must be finite.
double percentile(std::vector<double> samples, double q);

// Median (percentile 50) of the samples; NaN when empty.
double median(std::vector<double> samples);

// Median absolute deviation: median(|x - median(x)|), raw. NaN when empty.
double median_abs_deviation(const std::vector<double>& samples);

// Every aggregate at once. Never throws; n == 0 gives NaNs and n == 0.
Summary summarize(std::vector<double> samples);

}  // namespace fp
