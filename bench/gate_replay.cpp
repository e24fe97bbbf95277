// Re-judges a recorded side-by-side gate run (its gate.json) with the statistics of this build, look
// by look as the gate would have looked (first after 4 blocks, then every pair, the default budget of
// kDefaultBudgetBlocks blocks), without launching anything: how a change to measure/paired_stats.h
// would have decided on real launches. --no-machine drops the machine-speed reference from every
// launch (the statistics before the machine term), so both can be compared on the same launches.
// Prints one line per look and the outcome. Method and recorded figures: bench/README.md section 3.
// usage: gate_replay GATE.json [--no-machine]
#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "flow/paired/paired_runner.h"
#include "measure/paired_stats.h"

namespace {

fp::PairedOutcome launches_of(const nlohmann::json& j, bool machine) {
  fp::PairedOutcome o;
  o.arm_a = "baseline";
  o.arm_b = "candidate";
  for (const auto& l : j.at("launches")) {
    fp::ArmLaunch a;
    a.block = l.at("block").get<int>() - 1;
    a.arm = l.at("arm").get<std::string>();
    a.units = l.at("units").get<fp::LaunchUnits>();
    a.errors = l.value("errors", std::vector<std::string>{});
    if (machine) a.throughput_samples_ms = l.value("machine_throughput_samples_ms", std::vector<double>{});
    o.launches.push_back(std::move(a));
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gate_replay GATE.json [--no-machine]\n");
    return 64;
  }
  const bool machine = !(argc > 2 && std::string(argv[2]) == "--no-machine");
  std::ifstream in(argv[1]);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: not a gate.json: %s\n", argv[1], e.what());
    return 65;
  }
  const fp::PairedOutcome all = launches_of(j, machine);
  fp::PairedPlan plan;
  // The minimum effects the run used (floors already turned into relative effects at its baseline).
  for (const auto& g : j.at("gated")) {
    plan.gated.push_back(g.at("figure").get<std::string>());
    plan.min_effect[plan.gated.back()] = fp::MinEffect{g.at("min_effect").get<double>(), 0};
  }
  int recorded = 0;
  for (const auto& l : all.launches) recorded = std::max(recorded, l.block + 1);
  const int affordable = std::min(plan.max_blocks, plan.budget_blocks);
  std::string outcome = "unresolved: the recorded blocks ran out";
  int n = plan.first_blocks;
  for (; n <= recorded; n += 2) {
    fp::PairedOutcome o = all;
    o.launches.clear();
    for (const auto& l : all.launches)
      if (l.block < n) o.launches.push_back(l);
    o.blocks = n;
    fp::decide_paired(o, plan);
    std::printf("look at %d blocks:\n", n);
    for (const auto& d : o.decisions) std::printf("  %s\n", fp::decision_line(d, "candidate").c_str());
    if (!o.any_unresolved()) {
      outcome = "every gated figure decided";
      break;
    }
    if (o.any_regression()) {
      outcome = "regression";
      break;
    }
    if (n >= affordable) {
      outcome = "unresolved at the budget";
      break;
    }
    if (fp::beyond_budget(o.decisions, n, affordable)) {
      outcome = "unresolved: stopped early (beyond the budget)";
      break;
    }
  }
  std::printf("%s: %s after %d of %d recorded blocks (%s)\n", argv[1], outcome.c_str(), std::min(n, recorded), recorded,
              machine ? "machine term where it fits" : "no machine term");
  return 0;
}
