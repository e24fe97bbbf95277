// The smallest worsening of a figure worth failing: a fraction of the figure's reference value
// (the golden's median, or the baseline arm's in the side-by-side gate) with a floor in the
// figure's own unit, so that a small figure is not failed over a change no user feels and no
// measurement here resolves (5% of an 8 ms TTFT is 0.4 ms, less than the client itself adds).
//
//   effect at reference m   = max(relative * |m|, floor)         (golden mode: the figure's unit)
//   relative at reference m = max(relative, floor / |m|)         (the gate: its statistics are relative)
//
// One type for both modes: the golden comparison (golden/threshold_policy.h) and the side-by-side
// gate (flow/paired/paired_runner.h) take it from the case (case/case_file.h min_effect, guard_effect) and
// the defaults (case/effect_defaults.h).
#pragma once

#include <string>

namespace fp {

struct MinEffect {
  double relative = 0.05;  // fraction of the reference, > 0 (NaN: unknown, e.g. a result file older than it)
  double floor = 0;        // in the figure's unit, >= 0; 0: no floor

  // max(relative * |reference|, floor); the floor alone when the reference is not finite.
  double absolute_at(double reference) const;
  // max(relative, floor / |reference|); relative when the reference is 0 or not finite.
  double relative_at(double reference) const;
  // Whether the floor is what decides at this reference (floor > relative * |reference|).
  bool floor_in_force(double reference) const;
  // "5%" or "5%, floor 1" (the caller names the unit); "unknown" when relative is NaN.
  std::string text() const;
  bool known() const;  // relative is a finite number > 0 and floor a finite number >= 0
};

bool operator==(const MinEffect& a, const MinEffect& b);

}  // namespace fp
