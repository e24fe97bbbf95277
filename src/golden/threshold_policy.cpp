#include "golden/threshold_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "golden/noise_band.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string launches(size_t n) { return std::to_string(n) + (n == 1 ? " launch" : " launches"); }

// What the golden's n counts, by where its spread came from.
std::string band_units(BandSource s, size_t n) {
  const char* one = s == BandSource::rounds ? "round" : s == BandSource::nights ? "night" : "launch";
  return std::string(one) + (n == 1 ? "" : s == BandSource::launches || s == BandSource::launches_widened ? "es" : "s");
}

// Launch-to-launch standard deviation: from the golden's launch medians, or the run's when it has
// enough launches of its own and they spread wider. +inf when the golden has too few launches.
double launch_sigma(const LaunchSpread& g, const LaunchSpread& run) {
  if (g.n < kMinGoldenLaunches || !std::isfinite(g.spread)) return kInf;
  double sigma = kMadToSigma * g.spread;
  if (run.n >= kMinGoldenLaunches && std::isfinite(run.spread)) sigma = std::max(sigma, kMadToSigma * run.spread);
  return sigma;
}

double noise_band(double sigma, size_t n_golden, size_t n_run) {
  if (std::isinf(sigma)) return kInf;
  return kNoiseK * sigma * std::sqrt(1.0 / static_cast<double>(std::max<size_t>(n_golden, 1)) +
                                     1.0 / static_cast<double>(std::max<size_t>(n_run, 1)));
}

// The band and its source under the noise model (golden/noise_band.h); `sigma_w` is the launch
// sigma (+inf when unknown). Returns the band (+inf when unknown) and fills `source`.
double modelled_band(double sigma_w, const LaunchSpread& g, const LaunchSpread& run, const NoiseModel& model, std::string* source) {
  const double n_g = static_cast<double>(std::max<size_t>(g.n, 1)), n_r = static_cast<double>(std::max<size_t>(run.n, 1));
  // The night's sd the sitting spread predicts (pooled with the nights where it is worth something).
  const double ss_prior = model.sitting_sigma_rel * std::fabs(g.median);
  const double prior = std::isinf(sigma_w) ? kInf : std::sqrt(ss_prior * ss_prior + sigma_w * sigma_w / n_r);
  const NightNoise nights = night_noise(model.nights, prior, model.sitting_prior_df);
  if (nights.usable) {
    // The nights' sd at its upper confidence bound: a robust estimate from a handful of changes is
    // itself noisy, and an underestimate cries wolf (golden/noise_band.h).
    const double sn2 = nights.sigma_upper * nights.sigma_upper;
    // The golden's own level: its sitting plus its launches; without a launch spread, one more night.
    // (its sitting estimated from the nights' point estimate: the upper bound is counted once)
    const double point2 = nights.sigma * nights.sigma;
    const double golden2 = std::isinf(sigma_w) ? point2 : std::max(0.0, point2 - sigma_w * sigma_w / n_r) + sigma_w * sigma_w / n_g;
    *source = "nights: " + std::to_string(nights.nights) + " earlier nights, night-to-night sd " + significant(nights.nights_sigma, 6, "unknown") +
              (nights.pooled ? " (robust), pooled with the sitting spread's " + significant(prior, 6, "unknown") + " to " +
                                   significant(nights.sigma, 6, "unknown") + " (" + significant(nights.df, 3, "unknown") + " degrees of freedom; "
                             : std::string(" (robust; ")) +
              significant(nights.sigma_upper, 6, "unknown") + " at its 90% upper bound)";
    return kNoiseK * std::sqrt(sn2 + golden2);
  }
  if (std::isinf(sigma_w)) {
    *source = std::string(to_string(g.source)) + ": " + std::to_string(g.n) + " " + band_units(g.source, g.n) + " of the golden";
    return kInf;
  }
  const double launches2 = sigma_w * sigma_w * (1.0 / n_g + 1.0 / n_r);
  const bool widen = model.sitting_sigma_rel > 0 && (g.source == BandSource::launches || g.source == BandSource::rounds);
  if (!widen) {
    *source = std::string(to_string(g.source)) + ": " + std::to_string(g.n) + " " + band_units(g.source, g.n) + " of the golden";
    return kNoiseK * std::sqrt(launches2);
  }
  const double ss = model.sitting_sigma_rel * std::fabs(g.median);
  *source = std::string(g.source == BandSource::rounds ? "rounds" : "launches") + "-widened: " + std::to_string(g.n) + " " +
            band_units(g.source, g.n) + " of the golden, + " + significant_pct(model.sitting_sigma_rel, 3, "unknown") + " sd " +
            (model.sitting_source ? model.sitting_source : sitting_sigma_source()) +
            " (fewer than " + std::to_string(kMinNights) + " earlier nights: " + std::to_string(nights.nights) + ")";
  return kNoiseK * std::sqrt(launches2 + 2 * ss * ss);
}

}  // namespace

const char* to_string(FigureStatus s) {
  switch (s) {
    case FigureStatus::pass: return "pass";
    case FigureStatus::regressed: return "regressed";
    case FigureStatus::improved: return "improved";
    case FigureStatus::within_noise: return "within_noise";
    case FigureStatus::new_figure: return "new";
    case FigureStatus::missing: return "missing";
  }
  return "?";
}

const FigurePolicy* find_policy(const std::string& name, const std::map<std::string, FigurePolicy>& policies) {
  const FigurePolicy* best = nullptr;
  size_t best_len = 0;
  for (const auto& [key, policy] : policies) {
    bool match = name == key || starts_with(name, key + "_");
    if (match && (best == nullptr || key.size() > best_len)) {
      best = &policy;
      best_len = key.size();
    }
  }
  return best;
}

LaunchSpread launch_spread(const std::vector<double>& launch_medians) {
  LaunchSpread s;
  s.n = launch_medians.size();
  if (launch_medians.empty()) return s;
  s.median = median(launch_medians);
  s.spread = median_abs_deviation(launch_medians);
  return s;
}

ChangeJudgement judge_change(const FigurePolicy& policy, const LaunchSpread& g, const LaunchSpread& run, const NoiseModel& model) {
  ChangeJudgement j;
  const bool lower = policy.direction == Direction::lower_is_better;
  const double scale = std::fabs(g.median);
  j.worse_by = lower ? run.median - g.median : g.median - run.median;
  j.worse_by_rel = scale > 0 ? j.worse_by / scale : kNoValue;
  j.effect = policy.min_effect.absolute_at(g.median);
  j.floor_in_force = policy.min_effect.floor_in_force(g.median);
  j.guard = policy.guard;
  j.sigma = launch_sigma(g, run);
  j.noise = modelled_band(j.sigma, g, run, model, &j.band);
  j.sigma_rel = scale > 0 ? j.sigma / scale : kNoValue;
  j.noise_rel = scale > 0 ? j.noise / scale : kNoValue;
  j.resolves = j.noise <= j.effect;

  const double off = std::fabs(j.worse_by);
  if (off <= j.effect)
    j.status = FigureStatus::pass;
  else if (off > j.noise)
    j.status = j.worse_by > 0 ? FigureStatus::regressed : FigureStatus::improved;
  else
    j.status = FigureStatus::within_noise;

  j.facts = "golden median " + significant(g.median, 6, "unknown") + " (" + launches(g.n) + ", launch-to-launch spread " +
            (std::isinf(j.sigma) ? std::string("unknown") : significant(j.sigma, 6, "unknown") + " = " + significant_pct(j.sigma_rel, 3, "unknown")) +
            "), measured median " + significant(run.median, 6, "unknown") + " (" + launches(run.n) + "), " +
            (policy.guard ? "guard effect " : "min effect ") + policy.min_effect.text() + " (" + significant(j.effect, 6, "unknown") +
            (j.floor_in_force ? ": the floor" : "") + "), noise band " +
            (std::isinf(j.noise) ? std::string("unknown") : significant(j.noise, 6, "unknown") + " (" + significant_pct(j.noise_rel, 3, "unknown") + ")") + " from " + j.band + ", " +
            (lower ? "lower" : "higher") + " is better";
  if (!j.resolves) {
    j.resolution = "this golden cannot resolve a " + significant_pct(scale > 0 ? j.effect / scale : policy.min_effect.relative, 3, "unknown") + " change: ";
    if (std::isinf(j.noise))
      j.resolution += "it holds " + launches(g.n) + ", too few for a launch-to-launch spread (at least " +
                      std::to_string(kMinGoldenLaunches) + ")";
    else
      j.resolution += "launch-to-launch spread is " + (std::isinf(j.sigma) ? std::string("unknown") : significant_pct(j.sigma_rel, 3, "unknown")) +
                      " (noise band " + significant_pct(j.noise_rel, 3, "unknown") + " with " + std::to_string(g.n) + " golden and " + launches(run.n) +
                      " of this run, from " + j.band + ")";
    j.resolution += "; record more launches or use the side-by-side gate";
  }
  return j;
}

const char* to_string(ShareStatus s) {
  switch (s) {
    case ShareStatus::same: return "same";
    case ShareStatus::moved: return "moved";
    case ShareStatus::within_noise: return "within_noise";
    case ShareStatus::lost: return "lost";
    case ShareStatus::appeared: return "new";
  }
  return "?";
}

ShareJudgement judge_share(const LaunchSpread& g, const LaunchSpread& run, bool in_golden, bool in_run) {
  ShareJudgement j;
  j.change = (in_run ? run.median : 0.0) - (in_golden ? g.median : 0.0);
  j.noise = noise_band(launch_sigma(g, run), g.n, run.n);
  j.resolves = j.noise <= j.effect;
  if (in_golden && !in_run) j.status = ShareStatus::lost;
  else if (!in_golden && in_run) j.status = ShareStatus::appeared;
  else if (std::fabs(j.change) <= j.effect) j.status = ShareStatus::same;
  else j.status = std::fabs(j.change) > j.noise ? ShareStatus::moved : ShareStatus::within_noise;
  return j;
}

double regression_limit(const FigurePolicy& policy, const LaunchSpread& g, size_t run_launches, const NoiseModel& model) {
  LaunchSpread run;
  run.n = run_launches;
  std::string source;
  const double noise = modelled_band(launch_sigma(g, run), g, run, model, &source);
  if (std::isinf(noise) || !std::isfinite(g.median)) return kNoValue;
  const double margin = std::max(policy.min_effect.absolute_at(g.median), noise);
  return policy.direction == Direction::lower_is_better ? g.median + margin : g.median - margin;
}

}  // namespace fp
