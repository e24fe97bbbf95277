#include "golden/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "golden/noise_band.h"
#include "measure/throughput_reference.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {

namespace {

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

FigureComparison missing(const std::string& name, const GoldenFigure& g, const std::string& why) {
  FigureComparison c;
  c.name = name;
  c.status = FigureStatus::missing;
  c.gate = g.gate;
  const bool sampled_peak = is_memory_figure(name) && !memory_missing_fails(name);
  c.failed = g.gate && !sampled_peak;
  c.golden_median = g.median;
  c.message = name + ": missing: " + why + " (golden median " + significant(g.median, 6) + ")" +
              (sampled_peak ? "; a sampled peak: reported, not a failure" : g.gate ? "; gated figure, no evidence is a failure" : "");
  return c;
}

FigureComparison compare_memory(const std::string& name, const GoldenFigure& g, const Measured& m) {
  FigureComparison c;
  c.name = name;
  c.gate = true;
  c.memory = true;
  c.golden_median = g.median;
  c.measured_median = median(m.launch_medians);
  c.memory_judgement = judge_memory(name, g.median, c.measured_median);
  c.status = c.memory_judgement->status == MemoryStatus::grew      ? FigureStatus::regressed
             : c.memory_judgement->status == MemoryStatus::dropped ? FigureStatus::improved
                                                                    : FigureStatus::pass;
  c.failed = c.memory_judgement->failed();
  c.message = (c.failed ? "MEMORY " : "") + c.memory_judgement->message + " (golden " + std::to_string(g.n) + " launch(es), this run " +
              std::to_string(m.launch_medians.size()) + ")";
  return c;
}

FigureComparison compare_one(const std::string& name, const GoldenFigure& g, const Measured& m, SittingScope scope) {
  if (m.launch_medians.empty()) return missing(name, g, "measured in no launch");
  if (!all_finite(m.launch_medians)) return missing(name, g, "a launch median is NaN or infinite");
  if (is_memory_figure(name)) return compare_memory(name, g, m);
  FigureComparison c;
  c.name = name;
  c.gate = g.gate;
  c.guard = !g.gate && m.guard.has_value();
  c.golden_median = g.median;
  const FigurePolicy policy{g.direction, g.gate, c.guard ? *m.guard : m.min_effect, c.guard};
  const LaunchSpread run = launch_spread(m.launch_medians);
  c.measured_median = run.median;
  c.judgement = judge_change(policy, LaunchSpread{g.median, g.spread, g.n, g.band_source}, run,
                             NoiseModel{sitting_sigma_rel(name, scope), m.nights, sitting_sigma_source(name, scope), sitting_prior_df(name, scope)});
  c.status = c.judgement.status;
  c.failed = (c.gate || c.guard) && c.status == FigureStatus::regressed;

  const double d = c.judgement.worse_by;
  const std::string change = d > 0   ? "worse by " + significant(d, 6) + " (" + significant_pct(c.judgement.worse_by_rel, 6) + ")"
                             : d < 0 ? "better by " + significant(-d, 6) + " (" + significant_pct(-c.judgement.worse_by_rel, 6) + ")"
                                     : "unchanged";
  const std::string facts =
      c.judgement.facts + (c.judgement.resolution.empty() ? "" : "; " + c.judgement.resolution);
  switch (c.status) {
    case FigureStatus::regressed:
      c.message = (c.guard ? "GUARD " : "") + name + ": regressed: " + change + ": " + facts +
                  (c.gate ? "" : c.guard ? " (a guard: the job does not gate this figure, and it regressed beyond its guard effect)"
                                         : " (not gated: reported only)");
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

// Host-clock regressions become "within noise" with `why` (a busier night, slower cores, another machine); memory,
// GPU kernel time and the machine's own load figures are left as judged.
bool on_host_clock(const FigureComparison& c) {
  return !c.memory && c.name.find("kernel_ms") == std::string::npos && c.name.rfind("machine.", 0) != 0;
}

void not_judged_on_host_clock(Comparison& out, const std::string& tag, const std::string& why) {
  for (auto& c : out.figures) {
    if (!on_host_clock(c) || c.status != FigureStatus::regressed) continue;
    c.status = FigureStatus::within_noise;
    c.failed = false;
    c.message = tag + " " + c.message + "; " + why;
  }
}

// A machine figure (machine.*) as the golden recorded it and as this run measured it (the median of
// its launch medians); nullopt when either side lacks it or a launch median is not finite.
struct MachineMedians {
  double golden, now;
};
std::optional<MachineMedians> machine_medians(const Golden& golden, const std::map<std::string, const Measured*>& by_name,
                                              const std::string& figure) {
  auto g = golden.figures.find(figure);
  auto m = by_name.find(figure);
  if (g == golden.figures.end() || m == by_name.end() || m->second->launch_medians.empty() || !all_finite(m->second->launch_medians))
    return std::nullopt;
  return MachineMedians{g->second.median, median(m->second->launch_medians)};
}

// The two machine-speed references, each as the SLOWER MACHINE line names it. The thread count is
// this process's (measure/throughput_reference.h): the comparison runs where the launches ran.
struct SpeedReference {
  const char* figure;
  std::string workload;
};
std::vector<SpeedReference> speed_references() {
  const int n = throughput_threads();
  return {{kReferenceFigure, "a single-threaded latency chain"},
          {kThroughputFigure, "multiply-adds on " + std::to_string(n) + (n == 1 ? " thread" : " threads") + " meeting at a barrier"}};
}

// Which references were more than kSlowerMargin slower than the golden's, in words with both values,
// then the others the golden holds (within the margin); empty words when none was slower. `slowdown`:
// the largest slowdown beyond the margin (0.12 = 12% longer).
struct SlowerCores {
  std::string words;
  double slowdown = 0;
};
SlowerCores slower_machine(const Golden& golden, const std::map<std::string, const Measured*>& by_name) {
  std::vector<std::string> slower, within;
  double slowdown = 0;
  for (const SpeedReference& ref : speed_references()) {
    auto m = machine_medians(golden, by_name, ref.figure);
    if (!m || m->golden <= 0) continue;  // a golden without this reference does not use it
    const double change = m->now / m->golden - 1;
    const std::string values = " (" + std::string(ref.figure) + ": " + significant(m->now, 6) + " ms against " + significant(m->golden, 6) + " ms)";
    if (change > kSlowerMargin) {
      slowdown = std::max(slowdown, change);
      slower.push_back("a fixed reference workload, " + ref.workload + ", took " + significant_pct(change, 6) + " longer" + values);
    } else {
      within.push_back(ref.workload + " " + pct(change) + values + ", within the " + significant_pct(kSlowerMargin, 6) + " margin");
    }
  }
  if (slower.empty()) return {};
  return {join(slower, "; ") + (within.empty() ? "" : "; " + join(within, "; ")), slowdown};
}

// Host-clock regressions on slower cores, judged again with this run's values taken back to the
// golden's core speed (times divided by 1 + slowdown, rates multiplied): what the slower cores explain
// is "within noise" and said so; what they do not explain still fails, and says it was allowed for.
// A build 6x slower is not excused by cores 16% slower (one reference on a busy 2-core machine read
// that much).
void judge_allowing_for_slower_cores(Comparison& out, const Golden& golden, const std::map<std::string, const Measured*>& by_name,
                                     SittingScope scope, const SlowerCores& slower, const std::string& why) {
  for (auto& c : out.figures) {
    if (!on_host_clock(c) || c.status != FigureStatus::regressed) continue;
    auto g = golden.figures.find(c.name);
    auto m = by_name.find(c.name);
    if (g == golden.figures.end() || m == by_name.end()) continue;
    Measured at_golden_speed = *m->second;
    for (double& x : at_golden_speed.launch_medians)
      x = g->second.direction == Direction::lower_is_better ? x / (1 + slower.slowdown) : x * (1 + slower.slowdown);
    const FigureComparison again = compare_one(c.name, g->second, at_golden_speed, scope);
    if (again.status == FigureStatus::regressed) {
      c.message += "; SLOWER MACHINE allowed for: still regressed with this run's values taken back to the golden's core speed (" +
                   significant_pct(slower.slowdown, 4) + " slower): " + significant(again.measured_median, 6) + " against " + significant(c.golden_median, 6);
      continue;
    }
    c.status = FigureStatus::within_noise;
    c.failed = false;
    c.message = "SLOWER MACHINE " + c.message + "; taken back to the golden's core speed (" + significant_pct(slower.slowdown, 4) +
                " slower) it is " + significant(again.measured_median, 6) + " against " + significant(c.golden_median, 6) + ": " + why;
  }
}

}  // namespace

bool Comparison::failed() const {
  return !memory_moves.empty() || !untrustworthy.empty() ||
         std::any_of(figures.begin(), figures.end(), [](const FigureComparison& f) { return f.failed; });
}

namespace {

std::string busy_text(double load) {
  if (!std::isfinite(load) || load <= kBusyGoldenLimit) return "";
  return "recorded while other processes took " + significant_pct(load, 3) + " of the machine's CPU time (" + kOtherLoadFigure + " " +
         significant(load, 3) + ", above the " + significant_pct(kBusyGoldenLimit, 3) +
         " a quiet recording stays under): its host-clock figures carry that load and would hide a real slowdown, so every run "
         "judged against it fails as UNTRUSTWORTHY GOLDEN; record it again on a quiet machine";
}

}  // namespace

std::string busy_golden_text(const Golden& golden) {
  auto g = golden.figures.find(kOtherLoadFigure);
  return g == golden.figures.end() ? "" : busy_text(g->second.median);
}


Result<Comparison> compare_to_golden(const Golden& golden, const std::vector<Measured>& measured, const GoldenOrigin& origin) {
  std::map<std::string, const Measured*> by_name;
  for (const Measured& m : measured) {
    if (m.name.empty()) return make_error("compare: a measured figure has an empty name");
    if (!by_name.emplace(m.name, &m).second)
      return make_error("compare: figure " + quote(m.name) + " measured twice; each figure once per run");
    // The invalid value as written (printf's "nan"), not format_number's placeholder: the user looks for it.
    if (golden.figures.count(m.name) && !is_memory_figure(m.name) && !m.min_effect.known())
      return make_error("compare: figure " + quote(m.name) + ": min effect " + significant(m.min_effect.relative, 6, "nan") + " (floor " +
                        significant(m.min_effect.floor, 6, "nan") + ") is invalid: expected a fraction > 0 and a floor >= 0 (the case's plan.min_effect)");
    if (m.guard && !m.guard->known())
      return make_error("compare: figure " + quote(m.name) + ": guard " + significant(m.guard->relative, 6, "nan") + " (floor " + significant(m.guard->floor, 6, "nan") +
                        ") is invalid: expected a fraction > 0 and a floor >= 0 (the case's plan.guards)");
  }
  Comparison out;
  const SittingScope scope = origin.same_gpu ? SittingScope::same_gpu : SittingScope::unknown_gpu;
  for (const auto& [name, g] : golden.figures) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      out.figures.push_back(missing(name, g, "not measured by this run"));
    else
      out.figures.push_back(compare_one(name, g, *it->second, scope));
  }
  // A night much busier than the recording: host-clock regressions are not judged (kBusierMargin).
  if (auto load = machine_medians(golden, by_name, kOtherLoadFigure); load && load->now - load->golden > kBusierMargin) {
    out.busier = "the machine was busier than when the golden was recorded: other processes took " + significant_pct(load->now, 6) +
                 " of its CPU time while this run was timed, against " + significant_pct(load->golden, 6) + "; host-clock figures cannot tell a slower build "
                 "from a busier machine tonight and are not failed (memory, GPU kernel time and answers are judged)";
    not_judged_on_host_clock(out, "BUSIER", "not judged tonight: " + out.busier);
  }
  // A golden recorded on a busy machine: its host-clock figures would hide a real slowdown; the
  // comparison fails instead of passing, however busy tonight is (kBusyGoldenLimit).
  if (auto g = golden.figures.find(kOtherLoadFigure); g != golden.figures.end() && g->second.median > kBusyGoldenLimit) {
    auto now = by_name.find(kOtherLoadFigure);
    const bool known = now != by_name.end() && !now->second->launch_medians.empty() && all_finite(now->second->launch_medians);
    out.untrustworthy = "the golden was recorded on a busy machine: other processes took " + significant_pct(g->second.median, 3) +
                        " of its CPU time while the golden was recorded (above " + significant_pct(kBusyGoldenLimit, 3) + ")" +
                        (known ? ", " + significant_pct(median(now->second->launch_medians), 3) + " while this run was timed" : std::string()) +
                        "; its host-clock figures carry that load and would hide a real slowdown, so they prove nothing; "
                        "record the golden again on a quiet machine";
    for (auto& c : out.figures)
      if (on_host_clock(c) && !c.failed && c.status != FigureStatus::missing) c.message = "UNTRUSTWORTHY GOLDEN " + c.message;
  }
  // Slower cores than at the recording, by either reference: host-clock regressions are judged again
  // at the golden's core speed (kSlowerMargin).
  if (SlowerCores slower = slower_machine(golden, by_name); !slower.words.empty()) {
    out.slower = "this machine's cores were slower than when the golden was recorded: " + slower.words +
                 "; a host-clock regression that the slower cores explain is not failed, one beyond it is "
                 "(memory, GPU kernel time and answers are judged as always)";
    judge_allowing_for_slower_cores(out, golden, by_name, scope, slower, "not failed tonight: " + out.slower);
  }
  // A golden from another machine: host-clock regressions are not judged (GoldenOrigin).
  if (!origin.other_machine.empty()) {
    out.other_machine = "the golden was recorded on another machine (" + origin.other_machine +
                        "); host-clock figures of two machines differ by more than a regression worth failing and are not failed "
                        "(memory, GPU kernel time and answers are judged); record this machine's own golden to judge them";
    not_judged_on_host_clock(out, "OTHER MACHINE", "not judged: " + out.other_machine);
  }
  // Where the KV cache lives: the golden's devices against this run's.
  std::map<std::string, double> kv_before, kv_after;
  for (const auto& [name, g] : golden.figures)
    if (is_memory_figure(name)) kv_before[name] = g.median;
  for (const auto& [name, m] : by_name)
    if (is_memory_figure(name) && !m->launch_medians.empty() && all_finite(m->launch_medians)) kv_after[name] = median(m->launch_medians);
  if (auto moved = kv_cache_moved(kv_before, kv_after)) out.memory_moves.push_back(*moved);
  for (const auto& [name, m] : by_name) {
    if (golden.figures.count(name)) continue;
    FigureComparison c;
    c.name = name;
    c.status = FigureStatus::new_figure;
    c.measured_median = m->launch_medians.empty() ? kNoValue : median(m->launch_medians);
    c.message = name + ": new: no golden figure (measured median " + significant(c.measured_median, 6) + ", " +
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
    if (is_memory_figure(m.name)) {
      f.direction = Direction::lower_is_better;
      f.gate = true;
    } else if (prev) {
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
    f.band_source = m.band_source;
    if (!g.figures.emplace(m.name, f).second) return make_error(what + " measured twice; each figure once per run");
  }
  FP_TRY_STATUS(validate_golden(g, "golden for " + quote(fingerprint)));
  return g;
}

}  // namespace fp
