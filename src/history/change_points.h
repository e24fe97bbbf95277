// Change points in a series of nightly figures: where the level of the series stepped, found by
// E-divisive means (Matteson & James 2014, "A nonparametric approach for multiple change point
// analysis of multivariate data"; the method of MongoDB's signal-processing-algorithms and Apache
// Otava/Hunter), with alpha = 1:
//
//   1. For a segment, every split tau (both parts at least `min_segment` long) is scored with the
//      energy statistic  q = m*n/(m+n) * ( 2/(m*n) sum|x_i - y_j|
//                                          - 1/C(m,2) sum_{i<k}|x_i - x_k| - 1/C(n,2) sum_{j<k}|y_j - y_k| )
//      (x: the m values before tau, y: the n values from tau on); the best split is the one with the
//      largest q.
//   2. Its significance is a permutation test: the segment's values are shuffled `permutations`
//      times (splitmix64 seeded from `seed` and the segment's bounds: the same input always gives
//      the same answer) and the best q of each shuffle is compared with the observed one:
//      p = (1 + shuffles whose best q >= observed) / (1 + permutations).
//   3. The split is a change point when p <= max_p_value; the search then recurses on both parts
//      (bisection) and stops in a part with no significant split.
//
// Defaults: 199 permutations, max_p_value 0.01, min_segment 3. With 199 permutations p takes the
// values k/200, so p <= 0.01 means "at most one shuffle scored as high": on a series without a step
// (values exchangeable) the first test fires with probability 2/200 = 0.01 exactly, the false-alarm
// rate per series. A step shows once `min_segment` nights after it are in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/splitmix64.h"

namespace fp {

struct ChangePointOptions {
  int permutations = 199;      // shuffles per significance test (at least 1)
  double max_p_value = 0.01;   // a split is a change point when its p-value is at most this
  size_t min_segment = 3;      // the fewest values on either side of a split (below 2 counts as 2)
  uint64_t seed = 0x9e3779b97f4a7c15ull;
};

struct ChangePoint {
  size_t index = 0;            // the first value after the step
  double p_value = 1;          // of the permutation test that found it
  double q = 0;                // its energy statistic
  // Medians of the segments either side: from the previous change point (or the start) up to this
  // one, and from this one up to the next (or the end).
  double median_before = 0, median_after = 0;
  double relative_change = 0;  // (after - before) / |before|; NaN when before is 0
};

// The change points of `series` (finite values, in time order), by index ascending.
std::vector<ChangePoint> find_change_points(const std::vector<double>& series, const ChangePointOptions& options = {});

// The energy statistic q of splitting `series` at `tau` (0 < tau < size): exposed for tests.
double energy_q(const std::vector<double>& series, size_t tau);

// The median of `values` (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);

}  // namespace fp
