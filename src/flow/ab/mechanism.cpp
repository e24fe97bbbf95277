#include "flow/ab/mechanism.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/format_number.h"

namespace fp {
namespace {

// The interval of the difference relative to |off|.
std::string rel_interval(const AbResult& c) {
  if (!(c.median_a != 0) || !std::isfinite(c.ci.low)) return "[n/a]";
  const double a = std::fabs(c.median_a);
  return "[" + pct(c.ci.low / a) + ", " + pct(c.ci.high / a) + "]";
}

std::string measured(const AbResult& c) {
  std::string s = "measured " + pct(c.diff_rel) + ", 95% CI " + rel_interval(c) + ", n " + std::to_string(c.n_a) +
                  "/" + std::to_string(c.n_b);
  char p[32];
  std::snprintf(p, sizeof p, ", p = %.3g", c.mwu.p);
  return s + p;
}

std::string too_few(const AbResult& c) {
  if (!c.too_few_repetitions) return "";
  if (c.repetitions_needed) return "; too few samples: about " + std::to_string(*c.repetitions_needed) + " per arm would resolve it";
  return "; too few samples";
}

// +1 when the statement says the raw value goes up, -1 down.
int stated_sign(const MechanismStatement& st, bool lower_is_better) {
  if (st.expect == MechanismExpect::higher) return +1;
  if (st.expect == MechanismExpect::lower) return -1;
  const bool faster = st.expect == MechanismExpect::faster;
  return (faster == lower_is_better) ? -1 : +1;
}

MechanismCheck check_one(const MechanismStatement& st, const AbFigure* f) {
  MechanismCheck m;
  m.figure = st.figure;
  m.expect = st.expect;
  m.at_least = st.at_least;
  m.tolerance = st.tolerance;
  if (!f || f->cmp.n_a == 0 || f->cmp.n_b == 0) {
    m.outcome = MechanismVerdict::not_measured;
    m.detail = "this run has no samples of " + st.figure + " in both arms";
    return m;
  }
  const AbResult& c = f->cmp;
  const bool differs = c.verdict == AbVerdict::different;
  const double rel = c.diff_rel;
  if (st.expect == MechanismExpect::unchanged) {
    const double a = std::fabs(c.median_a);
    const bool ci_inside = a > 0 && std::isfinite(c.ci.low) && c.ci.low / a >= -st.tolerance && c.ci.high / a <= st.tolerance;
    const bool ci_zero = c.ci.low == 0 && c.ci.high == 0;
    if (differs && std::fabs(rel) > st.tolerance) {
      m.outcome = MechanismVerdict::contradicted;
    } else if (differs || ci_inside || ci_zero) {
      m.outcome = MechanismVerdict::confirmed;
    } else {
      m.outcome = MechanismVerdict::not_shown;
    }
    m.detail = measured(c) + "; tolerance +-" + pct(st.tolerance).substr(1) +
               (m.outcome == MechanismVerdict::not_shown ? "; within noise, but the interval allows more than the tolerance" : "") +
               (m.outcome == MechanismVerdict::not_shown ? too_few(c) : "");
    return m;
  }
  const int want = stated_sign(st, f->lower_is_better);
  const int got = c.diff > 0 ? +1 : c.diff < 0 ? -1 : 0;
  if (!differs) {
    m.outcome = MechanismVerdict::not_shown;
    m.detail = measured(c) + "; within noise" + too_few(c);
  } else if (got != want) {
    m.outcome = MechanismVerdict::contradicted;
    m.detail = measured(c) + "; the difference goes the other way";
  } else if (std::fabs(rel) + 1e-12 < st.at_least) {
    m.outcome = MechanismVerdict::smaller_than_stated;
    m.detail = measured(c) + "; stated at least " + pct(st.at_least).substr(1);
  } else {
    m.outcome = MechanismVerdict::confirmed;
    m.detail = measured(c) + (st.at_least > 0 ? "; stated at least " + pct(st.at_least).substr(1) : "");
  }
  return m;
}

}  // namespace

AbEffect effect_of(const AbResult& cmp, bool lower_is_better) {
  if (cmp.verdict != AbVerdict::different) return AbEffect::within_noise;
  const bool better = lower_is_better ? cmp.diff < 0 : cmp.diff > 0;
  return better ? AbEffect::better_with_flag_on : AbEffect::worse_with_flag_on;
}

MechanismOutcome check_mechanism(const std::vector<MechanismStatement>& statements, const std::vector<AbFigure>& figures,
                                 const std::vector<std::string>& not_system) {
  MechanismOutcome out;
  auto find = [&](const std::string& name) -> const AbFigure* {
    for (const auto& f : figures)
      if (f.name == name) return &f;
    return nullptr;
  };
  for (const auto& st : statements) out.checks.push_back(check_one(st, find(st.figure)));
  for (const auto& f : figures) {
    if (f.cmp.verdict != AbVerdict::different) continue;
    if (std::find(not_system.begin(), not_system.end(), f.name) != not_system.end()) continue;
    bool stated = std::any_of(statements.begin(), statements.end(), [&](const auto& s) { return s.figure == f.name; });
    if (stated) continue;
    out.unpredicted.push_back(f.name + ": " + measured(f.cmp) + ", " + to_string(effect_of(f.cmp, f.lower_is_better)) +
                              " (no statement about it)");
  }
  return out;
}

}  // namespace fp
