// The side-by-side gate's error rates and blocks to a decision, simulated through its one loop
// (flow/paired/gate_simulation.h) on every scenario of docs/gate-design.md "Error rates": per
// scenario, arm B slower by 0 (identical builds), by the regression bound (60% of the minimum
// effect: "regression" at most kAlpha), by the minimum effect ("no regression" at most kAlpha) and by
// 1.5 times it ("regression" in at least 95% within the budget).
// usage: gate_simulation [TRIALS] (default 2000; seeds fixed: the table is reproducible)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "flow/paired/gate_simulation.h"

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (trials < 1) {
    std::fprintf(stderr, "usage: gate_simulation [TRIALS]   (TRIALS a positive whole number)\n");
    return 64;
  }
  std::printf("kAlphaRegression %.3f, kAlphaNoRegression %.3f, kRegressionShare %.1f, %d trials per row\n", fp::kAlphaRegression,
              fp::kAlphaNoRegression, fp::kRegressionShare, trials);
  std::printf("%-30s %-6s %-8s %-10s %-10s %-10s %-8s %s\n", "scenario", "effect", "shift", "regression", "no_regr", "unresolved", "blocks",
              "p95");
  std::uint64_t seed = 1;
  for (const auto& s : fp::gate_scenarios(FLASHPROOF_SOURCE_DIR "/fixtures")) {
    const double m = s.min_effect();
    for (double k : {0.0, fp::kRegressionShare, 1.0, 1.5}) {
      const fp::SimRates r = fp::simulate_gate(s.gated, s.draw(k * m), trials, seed++, s.budget_blocks);
      std::printf("%-30s %-6.3f %-8s %-10.4f %-10.4f %-10.4f %-8.1f %.0f\n", s.name.c_str(), m,
                  (std::to_string(k).substr(0, 3) + "m").c_str(), r.regression, r.no_regression, r.unresolved, r.mean_blocks, r.p95_blocks);
    }
  }
  return 0;
}
