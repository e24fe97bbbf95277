// Where a golden comparison's noise band comes from, beyond the golden's own launches.
//
// A golden's launches are recorded back to back in one sitting: their spread is the launch-to-launch
// noise within a sitting (sigma_w). A nightly run is another sitting, and the machine moves between
// sittings as a whole (load, page cache, clock, a neighbour): a sitting offset with standard
// deviation sigma_s that no sitting sees in its own launches. With n_g golden launches and n_r
// launches tonight, the difference of the two medians then has the variance
//     sigma_w^2 (1/n_g + 1/n_r) + 2 sigma_s^2            (each side its own sitting)
// so a band from launches alone is too narrow: a golden whose 5 launches spread 1.7% failed an
// identical build at +10.9% one night (issue 21).
//
// 1. Launches widened (band source "launches-widened" in the result): sigma_s = sitting_sigma_rel of
//    the figure x |golden median|, the figure registry's (figure/figure_registry.h
//    FigureDef::sitting_sigma), measured with bench/sitting_spread.sh (bench/calibration.md).
// 2. Nights, once the history holds kMinNights earlier passing nights of this case on this
//    fingerprint with as many launches as tonight (band source "nights"; a night that failed never
//    counts, so a real step that fails is not learned as noise): one night's value has the variance
//    sigma_n^2 = sigma_s^2 + sigma_w^2 / n_r. It is estimated robustly from the night-to-night
//    changes of the last kNightsWindow nights: sigma_n = 1.4826 x median |y_t - y_(t-1)| / sqrt(2).
//    A median of absolute changes ignores one bad night (it moves two of ~30 changes) and a real
//    step (it moves one), so neither widens the band; a night leaves the window after 30 more.
//    The band is then k x sqrt(sigma_n^2 + sigma_s^2 + sigma_w^2 / n_g) (tonight's spread plus
//    the golden's own sitting), with sigma_s^2 = max(0, sigma_n^2 - sigma_w^2 / n_r) and sigma_n
//    at its upper confidence bound (kNightsConfidence below).
// 3. Where the sitting spread was measured under the nights' own conditions (GPU kernel time on the
//    golden's own GPU: sitting_prior_df > 0), it is not thrown away when the nights take over: the
//    night's variance it predicts, sigma_s^2 + sigma_w^2 / n_r, is pooled with the nights' estimate
//    by degrees of freedom (a moderated variance, as limma's empirical Bayes does), and the upper
//    bound uses both. Without it a handful of nights, at their 90% upper bound, widened the H200's
//    kernel-time band from 1.1% (launches widened) to 1.5-2.4%, and a 2% slowdown passed as noise
//    (NightlySimulation.KernelTimeOnTheGoldensGpuCatchesTwoPercent). The host-clock sitting
//    spreads are a pessimistic cap measured on a loaded machine: worth nothing beside the nights.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fp {

// Earlier nights needed before the band comes from them, and how many recent ones count.
inline constexpr size_t kMinNights = 8;
inline constexpr size_t kNightsWindow = 30;
// The nights' sd is used at its upper confidence bound (kNightsConfidence), sigma x sqrt(nu /
// chi2_(1 - confidence)(nu)), with nu = kMadEfficiency x (nights - 1) degrees of freedom: a median
// of absolute changes uses about 37% of the information a standard deviation would (its Gaussian
// efficiency). With 8 nights that widens the sd about 2x, with 30 about 1.35x: few nights cannot
// narrow the band on their word alone, and an underestimate is what cries wolf.
inline constexpr double kNightsConfidence = 0.9;
inline constexpr double kMadEfficiency = 0.37;

// The largest sitting-to-sitting sd the widening assumes (bench/calibration.md says why): no
// registry entry's sitting spread is larger.
inline constexpr double kMaxSittingSigma = 0.20;

// Where the golden was recorded, as far as the sitting spread is concerned: GPU kernel time moves
// less between sittings on the golden's own GPU than from one GPU of the same model to another.
enum class SittingScope { unknown_gpu, same_gpu };

// The sitting-to-sitting standard deviation of a figure, as a fraction of its median: its registry
// entry's (FigureDef::sitting_sigma, sitting_sigma_same_gpu), 0 for memory ("memory.*", judged by
// golden/memory_policy.h), kDefaultSittingSigma for a name the registry does not hold.
double sitting_sigma_rel(const std::string& figure, SittingScope scope = SittingScope::unknown_gpu);
// The degrees of freedom sitting_sigma_rel's value is worth when pooled with the nights
// (FigureDef::sitting_prior_df_same_gpu on the golden's own GPU): 0 where it is a cap rather than a
// measurement of this kind of night (host-clock figures).
double sitting_prior_df(const std::string& figure, SittingScope scope);
// Where sitting_sigma_rel's values come from, for the result line (by scope: a kernel figure on the
// golden's own GPU says so).
const char* sitting_sigma_source();
const char* sitting_sigma_source(const std::string& figure, SittingScope scope);

// The night-to-night standard deviation of one night's value from earlier nights (oldest first;
// only the last kNightsWindow count); usable when at least kMinNights are given.
struct NightNoise {
  bool usable = false;
  size_t nights = 0;       // nights used
  double sigma = 0;        // robust night-to-night standard deviation of one night's value
  double sigma_upper = 0;  // its upper confidence bound (kNightsConfidence): what the band uses
  double nights_sigma = 0; // the nights' own robust estimate (sigma is it, or it pooled with the prior)
  double df = 0;           // degrees of freedom behind sigma
  bool pooled = false;
};
// With prior_df > 0, the nights' estimate is pooled with prior_sigma (one night's sd predicted from
// the sitting spread) by degrees of freedom, and `pooled` says so.
NightNoise night_noise(const std::vector<double>& nights, double prior_sigma = 0, double prior_df = 0);

}  // namespace fp
