#include "golden/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/text.h"

namespace fp {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string pct(double rel) { return std::isnan(rel) ? "n/a %" : num(100.0 * rel) + "%"; }

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
  c.message = name + ": missing: " + why + " (golden median " + num(g.median) + ")" +
              (g.gate ? "; gated figure, no evidence is a failure" : "");
  return c;
}

FigureComparison compare_one(const std::string& name, const GoldenFigure& g, const Measured& m) {
  if (m.launch_medians.empty()) return missing(name, g, "measured in no launch");
  if (!all_finite(m.launch_medians)) return missing(name, g, "a launch median is NaN or infinite");
  FigureComparison c;
  c.name = name;
  c.gate = g.gate;
  c.golden_median = g.median;
  const FigurePolicy policy{g.direction, g.gate, m.min_effect};
  const LaunchSpread run = launch_spread(m.launch_medians);
  c.measured_median = run.median;
  c.judgement = judge_change(policy, LaunchSpread{g.median, g.spread, g.n}, run);
  c.status = c.judgement.status;
  c.failed = c.gate && c.status == FigureStatus::regressed;

  const double d = c.judgement.worse_by;
  const std::string change = d > 0   ? "worse by " + num(d) + " (" + pct(c.judgement.worse_by_rel) + ")"
                             : d < 0 ? "better by " + num(-d) + " (" + pct(-c.judgement.worse_by_rel) + ")"
                                     : "unchanged";
  const std::string facts =
      c.judgement.facts + (c.judgement.resolution.empty() ? "" : "; " + c.judgement.resolution);
  switch (c.status) {
    case FigureStatus::regressed:
      c.message = name + ": regressed: " + change + ": " + facts + (c.gate ? "" : " (not gated: reported only)");
      break;
    case FigureStatus::improved:
      c.message = name + ": improved: " + change + ": " + facts;
      break;
    case FigureStatus::within_noise:
      c.message = name + ": within noise: " + change + " is beyond the min effect but within the noise band; " +
                  "not a failure: " + facts;
      break;
    default:
      c.message = name + ": pass: " + change + ": " + facts;
  }
  return c;
}

}  // namespace

bool Comparison::failed() const {
  return std::any_of(figures.begin(), figures.end(), [](const FigureComparison& f) { return f.failed; });
}

Result<Comparison> compare_to_golden(const Golden& golden, const std::vector<Measured>& measured) {
  std::map<std::string, const Measured*> by_name;
  for (const Measured& m : measured) {
    if (m.name.empty()) return make_error("compare: a measured figure has an empty name");
    if (!by_name.emplace(m.name, &m).second)
      return make_error("compare: figure " + quote(m.name) + " measured twice; each figure once per run");
    if (golden.figures.count(m.name) && !(m.min_effect > 0 && std::isfinite(m.min_effect)))
      return make_error("compare: figure " + quote(m.name) + ": min effect " + num(m.min_effect) +
                        " is invalid: expected a fraction > 0 (the case's plan.min_effect)");
  }
  Comparison out;
  for (const auto& [name, g] : golden.figures) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      out.figures.push_back(missing(name, g, "not measured by this run"));
    else
      out.figures.push_back(compare_one(name, g, *it->second));
  }
  for (const auto& [name, m] : by_name) {
    if (golden.figures.count(name)) continue;
    FigureComparison c;
    c.name = name;
    c.status = FigureStatus::new_figure;
    c.measured_median = m->launch_medians.empty() ? kNoValue : median(m->launch_medians);
    c.message = name + ": new: no golden figure (measured median " + num(c.measured_median) + ", " +
                std::to_string(m->launch_medians.size()) + " launch(es)); `accept` records it";
    out.figures.push_back(std::move(c));
  }
  return out;
}

Result<Golden> golden_from_measured(const std::string& fingerprint, const std::vector<Measured>& measured,
                                    const std::map<std::string, FigurePolicy>& policies, const Golden* previous) {
  Golden g;
  g.fingerprint = fingerprint;
  for (const Measured& m : measured) {
    const std::string what = "figure " + quote(m.name);
    if (m.launch_medians.empty()) return make_error(what + " was measured in no launch; a golden needs launches");
    if (!all_finite(m.launch_medians)) return make_error(what + " has a NaN or infinite launch median");
    if (m.launch_medians.size() < kMinGoldenLaunches)
      return make_error(what + ": " + std::to_string(m.launch_medians.size()) + " launch(es); a golden needs at least " +
                        std::to_string(kMinGoldenLaunches) + " (their spread is its noise band): run `flashproof run CASE --launches " +
                        std::to_string(kDefaultGoldenLaunches) + "` and record from that run (`accept RUNDIR`)");
    GoldenFigure f;
    const GoldenFigure* prev = nullptr;
    if (previous) {
      auto it = previous->figures.find(m.name);
      if (it != previous->figures.end()) prev = &it->second;
    }
    if (prev) {
      f.direction = prev->direction;
      f.gate = prev->gate;
    } else {
      const FigurePolicy* policy = find_policy(m.name, policies);
      if (!policy) {
        std::string kinds;
        for (const auto& [key, unused] : policies) kinds += (kinds.empty() ? "" : ", ") + key;
        return make_error(what + ": no policy matches (known figures: " + (kinds.empty() ? "none" : kinds) +
                          "); add one for its kind");
      }
      f.direction = policy->direction;
      f.gate = policy->gate;
    }
    const LaunchSpread s = launch_spread(m.launch_medians);
    f.median = s.median;
    f.spread = s.spread;
    f.n = s.n;
    if (!g.figures.emplace(m.name, f).second) return make_error(what + " measured twice; each figure once per run");
  }
  FP_TRY_STATUS(validate_golden(g, "golden for " + quote(fingerprint)));
  return g;
}

}  // namespace fp
