#include "history/change_points.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fp {
namespace {

struct Split {
  size_t tau = 0;  // relative to the segment
  double q = -std::numeric_limits<double>::infinity();
};

// The split of `v` with the largest q, both parts at least `min_segment` long; tau 0 when there is
// none. O(n^2): the three distance sums are carried from one tau to the next as the value at tau
// moves from the right part to the left.
Split best_split(const std::vector<double>& v, size_t min_segment) {
  const size_t n = v.size();
  Split best;
  if (n < 2 * min_segment) return best;
  double within_left = 0, within_right = 0, between = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) within_right += std::fabs(v[i] - v[j]);
  for (size_t t = 0; t + min_segment < n; ++t) {
    // move v[t] to the left part
    double to_left = 0, to_right = 0;
    for (size_t i = 0; i < t; ++i) to_left += std::fabs(v[i] - v[t]);
    for (size_t j = t + 1; j < n; ++j) to_right += std::fabs(v[t] - v[j]);
    within_left += to_left;
    within_right -= to_right;
    between += to_right - to_left;
    const size_t tau = t + 1;
    if (tau < min_segment) continue;
    const double m = static_cast<double>(tau), k = static_cast<double>(n - tau);
    const double e = 2.0 / (m * k) * between - 2.0 / (m * (m - 1)) * within_left - 2.0 / (k * (k - 1)) * within_right;
    const double q = m * k / (m + k) * e;
    if (q > best.q) best = {tau, q};
  }
  return best;
}

uint64_t segment_seed(uint64_t seed, size_t begin, size_t end) {
  SplitMix64 mix(seed ^ (static_cast<uint64_t>(begin) * 0xbf58476d1ce4e5b9ull) ^ (static_cast<uint64_t>(end) * 0x94d049bb133111ebull));
  return mix.next();
}

// p-value of the best split of `v` (observed q) against `permutations` shuffles of `v`.
double permutation_p_value(const std::vector<double>& v, double observed, const ChangePointOptions& o, size_t min_segment,
                           uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> shuffled = v;
  // A shuffle that reproduces the observed order may score a hair apart in floating point: count
  // near-ties as reaching it (the conservative side).
  const double reach = observed - 1e-9 * std::max(1.0, std::fabs(observed));
  int at_least = 0;
  for (int p = 0; p < o.permutations; ++p) {
    for (size_t i = shuffled.size() - 1; i > 0; --i) std::swap(shuffled[i], shuffled[rng.below(i + 1)]);
    if (best_split(shuffled, min_segment).q >= reach) ++at_least;
  }
  return (1.0 + at_least) / (1.0 + o.permutations);
}

void search(const std::vector<double>& series, size_t begin, size_t end, const ChangePointOptions& o, size_t min_segment,
            std::vector<ChangePoint>& out) {
  const std::vector<double> v(series.begin() + static_cast<std::ptrdiff_t>(begin), series.begin() + static_cast<std::ptrdiff_t>(end));
  const Split split = best_split(v, min_segment);
  if (split.tau == 0) return;
  const double p = permutation_p_value(v, split.q, o, min_segment, segment_seed(o.seed, begin, end));
  if (p > o.max_p_value) return;
  ChangePoint cp;
  cp.index = begin + split.tau;
  cp.p_value = p;
  cp.q = split.q;
  out.push_back(cp);
  search(series, begin, cp.index, o, min_segment, out);
  search(series, cp.index, end, o, min_segment, out);
}

}  // namespace

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double energy_q(const std::vector<double>& series, size_t tau) {
  const size_t n = series.size();
  if (tau == 0 || tau >= n) return 0;
  double between = 0, within_left = 0, within_right = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const double d = std::fabs(series[i] - series[j]);
      if (j < tau) within_left += d;
      else if (i >= tau) within_right += d;
      else between += d;
    }
  const double m = static_cast<double>(tau), k = static_cast<double>(n - tau);
  const double left = m > 1 ? 2.0 / (m * (m - 1)) * within_left : 0;
  const double right = k > 1 ? 2.0 / (k * (k - 1)) * within_right : 0;
  return m * k / (m + k) * (2.0 / (m * k) * between - left - right);
}

std::vector<ChangePoint> find_change_points(const std::vector<double>& series, const ChangePointOptions& options) {
  const size_t min_segment = std::max<size_t>(2, options.min_segment);
  ChangePointOptions o = options;
  o.permutations = std::max(1, o.permutations);
  std::vector<ChangePoint> out;
  search(series, 0, series.size(), o, min_segment, out);
  std::sort(out.begin(), out.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  for (size_t c = 0; c < out.size(); ++c) {
    const size_t from = c == 0 ? 0 : out[c - 1].index;
    const size_t to = c + 1 == out.size() ? series.size() : out[c + 1].index;
    auto at = [&](size_t i) { return series.begin() + static_cast<std::ptrdiff_t>(i); };
    out[c].median_before = median_of(std::vector<double>(at(from), at(out[c].index)));
    out[c].median_after = median_of(std::vector<double>(at(out[c].index), at(to)));
    out[c].relative_change = out[c].median_before == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                       : (out[c].median_after - out[c].median_before) / std::fabs(out[c].median_before);
  }
  return out;
}

}  // namespace fp
