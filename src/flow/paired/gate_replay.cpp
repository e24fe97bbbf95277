#include "flow/paired/gate_replay.h"

#include <algorithm>

#include "figure/figure_registry.h"
#include "measure/paired_stats.h"

namespace fp {

Result<GateReplay> replay_gate(const nlohmann::json& j, bool machine, const std::map<std::string, double>& extra_guards) {
  if (!j.is_object() || !j.contains("launches") || !j["launches"].is_array() || !j.contains("gated") || !j["gated"].is_array())
    return make_error("not a gate.json: it needs the arrays \"launches\" and \"gated\"");
  PairedOutcome all;
  all.arm_a = "baseline";
  all.arm_b = "candidate";
  PairedPlan plan;
  try {
    for (const auto& l : j["launches"]) {
      ArmLaunch a;
      a.block = l.at("block").get<int>() - 1;
      a.arm = l.at("arm").get<std::string>();
      // A figure recorded under its old name reads as its own (itl_ms -> itl_mean_ms).
      for (auto& [figure, by_prompt] : l.at("units").get<LaunchUnits>()) a.units[paired_figure_name(figure)] = std::move(by_prompt);
      if (!a.units.count("itl_requests_ms") && l.contains("itl_requests_ms"))
        a.units["itl_requests_ms"][""] = l.at("itl_requests_ms").get<double>();
      a.errors = l.value("errors", std::vector<std::string>{});
      if (l.contains("first")) a.first = l.at("first").get<bool>();
      if (machine) a.throughput_samples_ms = l.value("machine_throughput_samples_ms", std::vector<double>{});
      all.launches.push_back(std::move(a));
    }
    for (const auto& g : j["gated"]) {
      plan.gated.push_back(paired_figure_name(g.at("figure").get<std::string>()));
      plan.min_effect[plan.gated.back()] = MinEffect{g.at("min_effect").get<double>(), 0};
    }
    for (const auto& g : j.value("guards", nlohmann::json::array()))
      plan.guards[paired_figure_name(g.at("figure").get<std::string>())] = MinEffect{g.at("min_effect").get<double>(), 0};
    for (const auto& [figure, effect] : extra_guards) plan.guards[figure] = MinEffect{effect, 0};
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("gate.json: ") + e.what());
  }
  GateReplay r;
  for (const auto& l : all.launches) r.recorded_blocks = std::max(r.recorded_blocks, l.block + 1);
  const int affordable = std::min(plan.max_blocks, plan.budget_blocks);
  r.outcome = "unresolved: the recorded blocks ran out";
  for (int n = plan.first_blocks; n <= r.recorded_blocks; n = next_look(n, plan.first_blocks)) {
    PairedOutcome o = all;
    o.launches.clear();
    for (const auto& l : all.launches)
      if (l.block < n) o.launches.push_back(l);
    o.blocks = n;
    decide_paired(o, plan);
    r.blocks = n;
    r.decisions = o.decisions;
    r.guards = o.guards;
    for (const auto& d : o.decisions) r.looks.push_back(std::to_string(n) + " blocks: " + decision_line(d, "candidate"));
    for (const auto& d : o.guards) r.looks.push_back(std::to_string(n) + " blocks: guard " + decision_line(d, "candidate"));
    // A regression first: where the gated figures decide at the look a guard regresses, the gate's
    // outcome is the guard's regression (build_gate.cpp decide_outcome).
    if (o.any_regression()) {
      r.outcome = "regression";
      break;
    }
    if (!o.any_unresolved()) {
      r.outcome = "decided";
      break;
    }
    if (n >= affordable) {
      r.outcome = "unresolved at the budget";
      break;
    }
    if (beyond_budget(o.decisions, n, affordable)) {
      r.outcome = "unresolved: stopped early (beyond the budget)";
      break;
    }
  }
  return r;
}

}  // namespace fp
