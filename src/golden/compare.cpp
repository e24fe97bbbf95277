#include "golden/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "measure/stats.h"
#include "util/text.h"

namespace fp {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Standard error of a median for normal data: sqrt(pi / 2) * sigma / sqrt(n).
constexpr double kMedianSeFactor = 1.2533141373155003;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string pct(double rel) { return std::isnan(rel) ? "n/a %" : num(100.0 * rel) + "%"; }

double median_se(double mad, size_t n) {
  if (n == 0) return 0.0;
  return kMedianSeFactor * kMadToSigma * mad / std::sqrt(static_cast<double>(n));
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

FigureComparison missing(const std::string& name, const GoldenFigure& g, const std::string& why) {
  FigureComparison c;
  c.name = name;
  c.status = FigureStatus::missing;
  c.gate = g.gate;
  c.failed = g.gate;
  c.golden_median = g.median;
  c.measured_median = c.tolerance = c.noise = c.worse_by = c.worse_by_rel = kNaN;
  c.message = name + ": missing: " + why + " (golden median " + num(g.median) + ")" +
              (g.gate ? "; gated figure, no evidence is a failure" : "");
  return c;
}

FigureComparison compare_one(const std::string& name, const GoldenFigure& g, const std::vector<double>& samples,
                             const CompareOptions& options) {
  if (samples.empty()) return missing(name, g, "measured with no samples");
  if (!all_finite(samples)) return missing(name, g, "measured samples contain NaN or infinity");
  FigureComparison c;
  c.name = name;
  c.gate = g.gate;
  c.golden_median = g.median;
  c.measured_median = median(samples);
  double mad = median_abs_deviation(samples);
  bool lower_better = g.direction == Direction::lower_is_better;
  c.worse_by = lower_better ? c.measured_median - g.median : g.median - c.measured_median;
  c.worse_by_rel = g.median != 0.0 ? c.worse_by / std::fabs(g.median) : kNaN;
  c.tolerance = std::max(g.tolerance_rel * std::fabs(g.median), g.tolerance_abs);
  double se_g = median_se(g.spread, g.n), se_m = median_se(mad, samples.size());
  c.noise = options.noise_k * std::sqrt(se_g * se_g + se_m * se_m);

  double off = std::fabs(c.worse_by);
  if (off > c.tolerance && off > c.noise)
    c.status = c.worse_by > 0 ? FigureStatus::regressed : FigureStatus::improved;
  else if (off > c.tolerance)
    c.status = FigureStatus::within_noise;
  else
    c.status = FigureStatus::pass;
  c.failed = c.gate && c.status == FigureStatus::regressed;

  std::string change = c.worse_by > 0 ? "worse by " + num(c.worse_by) + " (" + pct(c.worse_by_rel) + ")"
                       : c.worse_by < 0 ? "better by " + num(-c.worse_by) + " (" + pct(-c.worse_by_rel) + ")"
                                        : "unchanged";
  std::string facts = "golden median " + num(g.median) + ", measured median " + num(c.measured_median) +
                      " (n=" + std::to_string(samples.size()) + "), tolerance " + num(c.tolerance) +
                      " (max(" + num(g.tolerance_rel) + " x " + num(std::fabs(g.median)) + ", " +
                      num(g.tolerance_abs) + ")), noise band " + num(c.noise) + ", " +
                      (lower_better ? "lower" : "higher") + " is better";
  switch (c.status) {
    case FigureStatus::regressed:
      c.message = name + ": regressed: " + change + ": " + facts + (c.gate ? "" : " (not gated: reported only)");
      break;
    case FigureStatus::improved:
      c.message = name + ": improved: " + change + ": " + facts;
      break;
    case FigureStatus::within_noise:
      c.message = name + ": within noise: " + change + " is beyond the tolerance but within the noise band; " +
                  "not a failure, more repetitions would settle it: " + facts;
      break;
    default:
      c.message = name + ": pass: " + change + ": " + facts;
  }
  return c;
}

// The policy for `name`: exact key or key + "_" prefix, longest key wins.
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

bool Comparison::failed() const {
  return std::any_of(figures.begin(), figures.end(), [](const FigureComparison& f) { return f.failed; });
}

Result<Comparison> compare_to_golden(const Golden& golden, const std::vector<Measured>& measured,
                                     const CompareOptions& options) {
  std::map<std::string, const Measured*> by_name;
  for (const Measured& m : measured) {
    if (m.name.empty()) return make_error("compare: a measured figure has an empty name");
    if (!by_name.emplace(m.name, &m).second)
      return make_error("compare: figure " + quote(m.name) + " measured twice; each figure once per run");
  }
  Comparison out;
  for (const auto& [name, g] : golden.figures) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      out.figures.push_back(missing(name, g, "not measured by this run"));
    else
      out.figures.push_back(compare_one(name, g, it->second->samples, options));
  }
  for (const auto& [name, m] : by_name) {
    if (golden.figures.count(name)) continue;
    FigureComparison c;
    c.name = name;
    c.status = FigureStatus::new_figure;
    c.golden_median = c.tolerance = c.noise = c.worse_by = c.worse_by_rel = kNaN;
    c.measured_median = median(m->samples);
    c.message = name + ": new: no golden figure (measured median " + num(c.measured_median) + ", n=" +
                std::to_string(m->samples.size()) + "); `accept` records it";
    out.figures.push_back(std::move(c));
  }
  return out;
}

Result<Golden> golden_from_measured(const std::string& fingerprint, const std::vector<Measured>& measured,
                                    const std::map<std::string, FigurePolicy>& policies,
                                    const Golden* previous) {
  Golden g;
  g.fingerprint = fingerprint;
  for (const Measured& m : measured) {
    if (m.samples.empty())
      return make_error("accept: figure " + quote(m.name) + " has no samples; a golden needs n >= 1");
    if (!all_finite(m.samples))
      return make_error("accept: figure " + quote(m.name) + " has NaN or infinite samples");
    GoldenFigure f;
    const GoldenFigure* prev = nullptr;
    if (previous) {
      auto it = previous->figures.find(m.name);
      if (it != previous->figures.end()) prev = &it->second;
    }
    if (prev) {
      f.direction = prev->direction;
      f.tolerance_rel = prev->tolerance_rel;
      f.tolerance_abs = prev->tolerance_abs;
      f.gate = prev->gate;
    } else {
      const FigurePolicy* p = find_policy(m.name, policies);
      if (!p) {
        std::string kinds;
        for (const auto& [key, unused] : policies) kinds += (kinds.empty() ? "" : ", ") + key;
        return make_error("accept: figure " + quote(m.name) + ": no tolerance policy matches (known kinds: " +
                          (kinds.empty() ? "none" : kinds) + "); add one for its kind");
      }
      f.direction = p->direction;
      f.tolerance_rel = p->tolerance_rel;
      f.tolerance_abs = p->tolerance_abs;
      f.gate = p->gate;
    }
    f.median = median(m.samples);
    f.spread = median_abs_deviation(m.samples);
    f.n = m.samples.size();
    if (!g.figures.emplace(m.name, f).second)
      return make_error("accept: figure " + quote(m.name) + " measured twice; each figure once per run");
  }
  FP_TRY_STATUS(validate_golden(g, "accept for " + quote(fingerprint)));
  return g;
}

}  // namespace fp
