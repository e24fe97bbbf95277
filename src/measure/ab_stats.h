// A/B statistics for one figure measured with the flag off (A) and on (B): the difference of
// medians with a bootstrap confidence interval, a Mann-Whitney U test, a verdict, and a plain
// "too few repetitions" flag with an estimate of how many would resolve the observed difference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/stats.h"

namespace fp {

// Two-sided Mann-Whitney U test, computed as scipy.stats.mannwhitneyu(a, b, method="auto",
// use_continuity=True, alternative="two-sided") does (scipy 1.10):
//  - exact: when min(n_a, n_b) <= 8 and the pooled samples have no ties; p = 2 * P(U >= max(U_a, U_b))
//    under H0 from the exact null distribution, clipped to 1;
//  - otherwise the normal approximation with tie correction and continuity correction:
//    z = (max(U_a, U_b) - n_a n_b / 2 - 0.5) / sqrt(n_a n_b / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))),
//    p = 2 * (1 - Phi(z)), clipped to [0, 1]. When every value is tied, p = 1.
// An empty arm gives p = NaN.
struct MannWhitney {
  double u_a = 0;     // U statistic of sample a: number of pairs with a > b, ties counting 1/2
  double p = 0;       // two-sided p-value
  bool exact = false; // exact null distribution used (else normal approximation)
};
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// Percentile-bootstrap interval for median(B) - median(A): each resample draws n_a values from A and
// n_b from B with replacement, independently. Deterministic: the generator is splitmix64 seeded with
// `seed`, and indices are drawn by rejection sampling, so the same input gives the same interval on
// every platform and compiler. NaN bounds when an arm is empty.
struct Interval {
  double low;
  double high;
};
Interval bootstrap_median_diff_ci(const std::vector<double>& a, const std::vector<double>& b,
                                  double confidence, int resamples, uint64_t seed);

struct AbOptions {
  double alpha = 0.05;        // two-sided significance level for the MWU test
  double confidence = 0.95;   // bootstrap interval coverage
  int resamples = 2000;       // bootstrap resamples
  uint64_t seed = 0x666c617368ull;  // fixed: same samples, same interval
  double power = 0.8;         // power used for the repetitions-needed estimate
};

enum class AbVerdict { within_noise, different };
const char* to_string(AbVerdict v);

struct AbResult {
  size_t n_a = 0, n_b = 0;
  double median_a = kNoValue, median_b = kNoValue;
  double diff = kNoValue;  // median_b - median_a, in the figure's unit
  double diff_rel = kNoValue;  // diff / |median_a|; NaN when median_a == 0
  Interval ci{kNoValue, kNoValue};  // bootstrap interval for diff at options.confidence
  MannWhitney mwu;
  // within_noise when the interval contains 0 or mwu.p >= alpha (or an arm is empty);
  // different only when both the interval excludes 0 and p < alpha.
  AbVerdict verdict = AbVerdict::within_noise;
  // Repetitions per arm needed to resolve the observed difference (see needed_repetitions()).
  // nullopt when the samples show no ordering at all (P(B > A) == 1/2) or an arm is empty.
  std::optional<size_t> repetitions_needed;
  // true when min(n_a, n_b) is below the floor where the test can reach alpha at all, or when the
  // verdict is within_noise and min(n_a, n_b) < repetitions_needed.
  bool too_few_repetitions = false;
  std::string explanation;  // one or two plain sentences for the report
};

// Smallest n per arm for which the exact two-sided MWU test can reach p < alpha at all
// (perfect separation: p = 2 / C(2n, n)). 4 for alpha = 0.05.
size_t min_repetitions_for_alpha(double alpha);

// Repetitions per arm for a two-sided MWU test at `alpha` to detect, with probability `power`, a shift
// whose probability of superiority is p_sup = P(B > A) (Noether 1987, equal arms):
//   n_per_arm = ceil((z_{1-alpha/2} + z_power)^2 / (6 * (p_sup - 1/2)^2)),
// and never below min_repetitions_for_alpha(alpha). nullopt when p_sup == 1/2.
// For comparison, google/benchmark's compare.py asks for 9 repetitions regardless of the effect;
// this rule asks for more when the observed difference is small against the spread, fewer when large.
std::optional<size_t> needed_repetitions(double p_sup, double alpha, double power);

// The whole comparison of one figure, B against A.
AbResult compare_ab(const std::vector<double>& a, const std::vector<double>& b,
                    const AbOptions& options = {});

}  // namespace fp
