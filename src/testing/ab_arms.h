// Test support (header only, for *_test.cpp): A/B arms for the A/B unit tests (ab_runner_test,
// ab_decision_test).
#pragma once

#include <string>

#include "report/ab_report.h"

namespace fp::testing {

// An arm whose evidence is as A/B requires it (on: active, off: not active), unless told otherwise.
inline AbArm arm(const std::string& name, bool as_required = true) {
  AbArm a;
  a.name = name;
  a.flag_value = name;
  a.verdict = name == "on" ? Activity::Active : Activity::NotActive;
  a.verdict_as_required = as_required;
  return a;
}

}  // namespace fp::testing
