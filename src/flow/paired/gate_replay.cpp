#include "flow/paired/gate_replay.h"

#include <algorithm>

#include "figure/figure_registry.h"
#include "flow/paired/sequential_loop.h"
#include "measure/paired_stats.h"

namespace fp {

Result<GateReplay> replay_gate(const nlohmann::json& j, const std::map<std::string, double>& extra_guards) {
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
      a.throughput_samples_ms = l.value("machine_throughput_samples_ms", std::vector<double>{});
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
  // The gate's one loop (flow/paired/sequential_loop.h) over the recorded blocks; the budget is the
  // default number of blocks (the recorded block times are not replayed).
  PairedOutcome o = all;
  SequentialSource source;
  source.add_block = [&](int block) { return block < r.recorded_blocks; };
  source.look = [&](int n, const LookSchedule& schedule) {
    o.launches.clear();
    for (const auto& l : all.launches)
      if (l.block < n) o.launches.push_back(l);
    o.blocks = n;
    decide_paired(o, plan, schedule);
    for (const auto& d : o.decisions) r.looks.push_back(std::to_string(n) + " blocks: " + decision_line(d, "candidate"));
    for (const auto& d : o.guards) r.looks.push_back(std::to_string(n) + " blocks: guard " + decision_line(d, "candidate"));
    return LoopLook{o.decisions, o.guards};
  };
  source.affordable = [&](int) { return std::min(plan.max_blocks, plan.budget_blocks); };
  const LoopResult loop = run_sequential(plan.first_blocks, plan.max_blocks, source);
  r.blocks = loop.looked_at;
  r.decisions = loop.last.gated;
  r.guards = loop.last.guards;
  switch (loop.end) {
    case LoopEnd::regression: r.outcome = "regression"; break;
    case LoopEnd::decided: r.outcome = "decided"; break;
    case LoopEnd::budget:
    case LoopEnd::schedule_end: r.outcome = "unresolved at the budget"; break;
    case LoopEnd::source_stopped: r.outcome = "unresolved: the recorded blocks ran out"; break;
  }
  return r;
}

}  // namespace fp
