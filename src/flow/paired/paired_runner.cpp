#include "flow/paired/paired_runner.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include "case/effect_defaults.h"
#include "client/stream_metrics.h"
#include "figure/figure_registry.h"
#include "flow/paired/alternation.h"
#include "flow/paired/room_for_both.h"
#include "flow/paired/sequential_loop.h"
#include "flow/passes/evidence_pass.h"
#include "flow/passes/figures.h"
#include "flow/passes/gpu_probe.h"
#include "flow/passes/probed_check.h"
#include "flow/passes/progress.h"
#include "flow/passes/timed_log_check.h"
#include "runtime/process.h"
#include "runtime/thread_args.h"
#include "util/cpu_list.h"
#include "util/seconds_since.h"
#include "util/splitmix64.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Per figure, per prompt: every repetition's value in one launch.
using Repetitions = std::map<std::string, std::map<std::string, std::vector<double>>>;

void put(Repetitions& r, const std::string& figure, const std::string& prompt, double v) {
  if (std::isfinite(v)) r[figure][prompt].push_back(v);
}

// The probed launch of one arm in one block, after its timed launch: the timed configuration with the
// kernel probe, serving the job's load as the golden path's probed check does
// (flow/passes/probed_check.h run_probed_load); only the kernel figures, per token, are taken from it.
void probed_kernel_units(const CaseContext& ctx, const LaunchPlacement& timed, ArmLaunch& l) {
  const LaunchPlacement at = timed.below("probed");
  std::error_code ec;
  fs::create_directories(at.out_dir, ec);
  const GpuProbePlan probe = plan_gpu_probe(at.out_dir + "/kernels.tsv");
  if (!probe.attached) {
    l.errors.push_back("a gated figure is GPU kernel time per token, and the kernel probe is not attached: " + probe.why_not);
    return;
  }
  auto load = run_probed_load(ctx, at, probe);
  if (!load)
    l.errors.push_back("probed launch: " + load.error().message);
  else
    add_kernel_units(l.units, load->per_token);
}

// The case runs on a GPU: a backend it expects is not the CPU (an unstated backend: the GPU memory
// the launches measured decides, room_for_both).
bool runs_on_gpu(const Case& c) {
  return std::any_of(c.expect.backends.begin(), c.expect.backends.end(), [](const std::string& b) { return b != "CPU"; });
}

}  // namespace

bool higher_is_better(const std::string& figure) { return !figure_lower_is_better(figure); }

void add_kernel_units(LaunchUnits& units, const KernelTimePerToken& per_token) {
  if (per_token.gpu_ms > 0) units["gpu_kernel_ms_per_token"][""] = per_token.gpu_ms;
  if (per_token.attention_ms > 0) units["attention_kernel_ms_per_token"][""] = per_token.attention_ms;
}

LaunchUnits launch_units(const TimedPass& pass) {
  Repetitions reps;
  const LaunchFacts launch = launch_facts(pass);
  const std::vector<RoundFacts> rounds = round_facts(pass, launch.requests);
  std::vector<double> values;
  for (const auto& d : figure_registry()) {
    if (!(d.engines & kPairedEngine)) continue;
    const std::string name(d.name);
    if (d.per_request)
      for (size_t i = 0; i < launch.requests.size(); ++i) {
        values.clear();
        d.per_request(launch.requests[i], values);
        for (double v : values) put(reps, name, pass.requests[i].prompt_id, v);
      }
    if (d.per_round)
      for (const auto& r : rounds)
        if (auto v = d.per_round(r)) put(reps, name, "", *v);
    if (d.per_launch)
      if (auto v = d.per_launch(launch)) put(reps, name, "", *v);
  }
  LaunchUnits out;
  for (const auto& [figure, by_prompt] : reps)
    for (const auto& [prompt, values] : by_prompt) out[figure][prompt] = median(values);
  return out;
}

std::string effect_note(const MinEffect& effect, double reference, const std::string& figure) {
  if (!(effect.floor > 0) || !std::isfinite(reference)) return "";
  const FigureDef* d = figure_def(figure);
  const size_t us = figure.rfind('_');
  const std::string unit = d ? " " + std::string(d->unit) : us == std::string::npos ? "" : " " + figure.substr(us + 1);
  char buf[200];
  if (effect.floor_in_force(reference))
    std::snprintf(buf, sizeof buf, "floor %g%s in force: %g%% of the baseline's %.4g%s is %.3g%s", effect.floor, unit.c_str(),
                  100 * effect.relative, reference, unit.c_str(), effect.relative * std::fabs(reference), unit.c_str());
  else
    std::snprintf(buf, sizeof buf, "floor %g%s, not in force at the baseline's %.4g%s", effect.floor, unit.c_str(), reference,
                  unit.c_str());
  return buf;
}

std::optional<double> itl_requests_ms(const TimedPass& pass) {
  LaunchFacts launch = launch_facts(pass);
  launch.probes.clear();  // the requests' own unit, as itl_mean_ms has it without probes
  return figure_def("itl_mean_ms")->per_launch(launch);
}

void apply_decode_probes(PairedPlan& plan, bool runtime_serves_probes, int requested) {
  const bool gates_itl = std::find(plan.gated.begin(), plan.gated.end(), "itl_mean_ms") != plan.gated.end();
  plan.decode_probes = !runtime_serves_probes || plan.concurrent_rounds ? 0
                       : requested >= 0                                 ? requested
                       : gates_itl                                      ? kDefaultDecodeProbes
                                                                        : 0;
  if (plan.decode_probes == 0 || !gates_itl) return;
  auto it = plan.min_effect.find("itl_mean_ms");
  plan.guards["itl_requests_ms"] = it != plan.min_effect.end() ? it->second : MinEffect{kDefaultMinEffect, default_floor("itl_mean_ms")};
}

std::optional<double> itl_gap_median_ms(const TimedPass& pass) {
  std::vector<double> gaps;
  for (const auto& tr : pass.requests)
    for (double g : inter_event_gaps_s(tr.result)) gaps.push_back(g * 1e3);
  if (gaps.empty()) return std::nullopt;
  return median(gaps);
}

std::map<std::string, double> itl_per_prompt_ms(const TimedPass& pass) {
  std::map<std::string, std::vector<double>> by_prompt;
  for (const auto& tr : pass.requests) {
    std::vector<double> gaps = inter_event_gaps_s(tr.result);
    if (!gaps.empty()) by_prompt[tr.prompt_id].push_back(median(gaps) * 1e3);
  }
  std::map<std::string, double> out;
  for (const auto& [prompt, v] : by_prompt) out[prompt] = median(v);
  return out;
}

bool PairedOutcome::any_unresolved() const { return LoopLook{decisions, guards}.any_unresolved(); }

bool PairedOutcome::any_regression() const { return LoopLook{decisions, guards}.any_regression(); }

double baseline_median(const PairedOutcome& o, const std::string& figure) {
  std::vector<double> a;
  for (const auto& u : paired_units(o, figure))
    if (std::isfinite(u.a)) a.push_back(u.a);
  return a.empty() ? kNoValue : median(a);
}

// The launch's machine speed (reported beside the estimate, measure/paired_stats.h): the median of
// the throughput reference timed through it. Kernel figures come from the probed launch and GPU
// clocks: none for them.
namespace {
double launch_machine_ms(const ArmLaunch& l, const std::string& figure) {
  const FigureDef* d = figure_def(figure);
  if (l.throughput_samples_ms.empty() || (d && !d->machine_reference)) return kNoValue;
  return median(l.throughput_samples_ms);
}
}  // namespace

std::vector<PairedUnit> paired_units(const PairedOutcome& o, const std::string& figure) {
  std::map<int, const ArmLaunch*> a, b;
  for (const auto& l : o.launches) {
    if (!l.errors.empty()) continue;
    (l.arm == o.arm_a ? a : b)[l.block] = &l;
  }
  std::vector<PairedUnit> out;
  for (const auto& [block, la] : a) {
    auto it = b.find(block);
    if (it == b.end()) continue;
    auto fa = la->units.find(figure);
    auto fb = it->second->units.find(figure);
    if (fa == la->units.end() || fb == it->second->units.end()) continue;
    for (const auto& [prompt, va] : fa->second) {
      auto pb = fb->second.find(prompt);
      if (pb != fb->second.end())
        out.push_back({block, la->first.value_or(a_first_in_block(block)), prompt, va, pb->second, launch_machine_ms(*la, figure),
                       launch_machine_ms(*it->second, figure)});
    }
  }
  return out;
}

void decide_paired(PairedOutcome& o, const PairedPlan& plan, const LookSchedule& schedule) {
  // The figure's effect as a fraction: its relative part, or its floor through the baseline's median
  // where that is larger.
  auto input = [&](const std::string& figure, const MinEffect& effect) {
    const double ref = baseline_median(o, figure);
    FigureInput in{figure, !higher_is_better(figure), effect.relative_at(ref), paired_units(o, figure)};
    in.effect_note = effect_note(effect, ref, figure);
    return in;
  };
  auto effect_of = [&](const std::string& figure) {
    auto it = plan.min_effect.find(figure);
    return it != plan.min_effect.end() ? it->second : MinEffect{kDefaultMinEffect, default_floor(figure)};
  };
  std::vector<FigureInput> gated, guards, other;
  std::set<std::string> names;
  for (const auto& l : o.launches)
    for (const auto& [figure, _] : l.units) names.insert(figure);
  for (const auto& g : plan.gated) gated.push_back(input(g, effect_of(g)));
  for (const auto& [figure, effect] : plan.guards)
    if (names.count(figure) && std::find(plan.gated.begin(), plan.gated.end(), figure) == plan.gated.end())
      guards.push_back(input(figure, effect));
  for (const auto& n : names)
    if (std::find(plan.gated.begin(), plan.gated.end(), n) == plan.gated.end() && !plan.guards.count(n))
      other.push_back(input(n, effect_of(n)));
  o.decisions = decide_figures(gated, schedule);
  o.guards = guards.empty() ? std::vector<FigureDecision>{} : decide_figures(guards, schedule);
  o.reported.clear();
  // Reported figures are decided one by one (no family to correct for: they never gate).
  for (const auto& f : other) {
    auto d = decide_figures({f}, schedule);
    o.reported.push_back(d.front());
  }
}

std::vector<bool> block_orders(int blocks, std::uint64_t seed) {
  SplitMix64 coin(seed);
  std::vector<bool> out;
  for (int k = 0; k < blocks; ++k) out.push_back(k % 2 == 0 ? (coin.next() >> 63) != 0 : !out.back());
  return out;
}

PairedOutcome run_paired(const PairedArm& a, const PairedArm& b, const PairedPlan& plan, const LaunchHook& hook) {
  PairedOutcome o;
  o.arm_a = a.name;
  o.arm_b = b.name;
  // Client and runtime on disjoint CPUs: as the plan says, or where there are enough, the client on
  // the last CPU and the runtime on the others. With fewer than 4 the runtime's threads would lose
  // too much: not pinned.
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> runtime_cpus;
  cpu_set_t harness_cpus;
  const bool restore = ::sched_getaffinity(0, sizeof harness_cpus, &harness_cpus) == 0;
  std::vector<int> client_cpus;
  std::string chosen;
  if (!plan.runtime_cpus.empty()) {
    for (int i = 0; i < CPU_SETSIZE && restore; ++i)
      if (CPU_ISSET(i, &harness_cpus) && std::find(plan.runtime_cpus.begin(), plan.runtime_cpus.end(), i) == plan.runtime_cpus.end())
        client_cpus.push_back(i);
    chosen = " (--runtime-cpus)";
    if (client_cpus.empty())
      o.pinning.push_back("client and runtime not pinned: --runtime-cpus " + cpu_list_text(plan.runtime_cpus) +
                          " leaves the client no CPU of its own");
  } else if (cpus >= 4) {
    client_cpus = {cpus - 1};
  } else {
    o.pinning.push_back("client and runtime not pinned: " + std::to_string(cpus) +
                        " CPUs here, too few to give the client one of its own");
  }
  if (!client_cpus.empty()) {
    cpu_set_t client;
    CPU_ZERO(&client);
    for (int c : client_cpus) CPU_SET(c, &client);
    if (::sched_setaffinity(0, sizeof client, &client) == 0) {
      if (!plan.runtime_cpus.empty()) runtime_cpus = plan.runtime_cpus;
      else
        for (int i = 0; i < cpus - 1; ++i) runtime_cpus.push_back(i);
      o.pinning.push_back("client pinned to CPU" + std::string(client_cpus.size() > 1 ? "s " : " ") + cpu_list_text(client_cpus) +
                          ", runtime to CPU" + (runtime_cpus.size() > 1 ? "s " : " ") + cpu_list_text(runtime_cpus) + chosen);
    } else {
      o.pinning.push_back(std::string("client and runtime not pinned: sched_setaffinity failed: ") + std::strerror(errno));
    }
  }
  // A pinned runtime gets as many threads as it has CPUs (runtime/thread_args.h), the same in both arms.
  std::map<const PairedArm*, std::vector<std::string>> thread_args;
  if (!runtime_cpus.empty()) {
    std::set<std::string> notes;
    for (const PairedArm* arm : {&a, &b}) {
      const ThreadArgs t = thread_args_for_cpus(arm->ctx.adapter, arm->ctx.c.launch.argv, static_cast<int>(runtime_cpus.size()),
                                                runtime_default_threads(arm->ctx.adapter));
      thread_args[arm] = t.args;
      if (notes.insert(t.note).second) o.pinning.push_back(t.note);
    }
  }
  TimedOptions t;
  t.warmup = plan.warmup;
  t.repetitions = plan.rounds;
  t.concurrent_rounds = plan.concurrent_rounds;
  t.machine_samples = true;
  t.decode_probes = plan.decode_probes;
  const auto t0 = Clock::now();
  std::vector<double> block_s;
  auto mean_block_s = [&] { return std::accumulate(block_s.begin(), block_s.end(), 0.0) / static_cast<double>(block_s.size()); };
  o.budget_s = plan.budget_s;
  o.order_seed = plan.order_seed ? *plan.order_seed : (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  const std::vector<bool> a_first = block_orders(plan.max_blocks, o.order_seed);
  bool interleave = false;  // the first block runs one launch at a time (room_for_both)
  // One block: both arms' launches (docs/gate-design.md, the measurement design); false where a
  // launch failed or an interrupt came.
  auto add_block = [&](int k) -> bool {
    if (interrupted()) return false;
    const auto b0 = Clock::now();
    const PairedArm* order[2] = {&a, &b};
    if (!a_first[static_cast<size_t>(k)]) std::swap(order[0], order[1]);
    const CaseContext* ctxs[2] = {&order[0]->ctx, &order[1]->ctx};
    LaunchPlacement places[2];
    for (int i = 0; i < 2; ++i) {
      const PairedArm* arm = order[i];
      LaunchPlacement& at = places[i];
      at = arm->at.below("block-" + std::to_string(k + 1));
      at.runtime_cpus = runtime_cpus;
      for (const auto& arg : thread_args[arm]) at.timed_args.push_back(arg);
      std::error_code ec;
      fs::create_directories(at.out_dir, ec);
    }
    std::optional<Result<TimedPass>> passes[2];
    double pass_s[2] = {0, 0};
    const bool together = interleave;
    if (together) {
      // Both up at once, a step each in turn; the second opens once the first is warm.
      progress_line(plan.quiet, a.ctx.c.name + " side by side",
                    "block " + std::to_string(k + 1) + ": " + order[0]->name + " and " + order[1]->name + ", requests in turn");
      Alternation turns;
      std::thread second([&] {
        TimedOptions t2 = t;
        t2.turns = &turns.party(1);
        const auto l0 = Clock::now();
        passes[1] = run_timed_pass(*ctxs[1], places[1], t2);
        pass_s[1] = seconds_since(l0);
      });
      TimedOptions t1 = t;
      t1.turns = &turns.party(0);
      const auto l0 = Clock::now();
      passes[0] = run_timed_pass(*ctxs[0], places[0], t1);
      pass_s[0] = seconds_since(l0);
      second.join();
      // A second launch that could not start beside the first: this block's second launch and
      // every later block one at a time.
      if (*passes[0] && !*passes[1]) {
        interleave = false;
        o.pinning.push_back("launches one at a time from block " + std::to_string(k + 1) + ": the " + order[1]->name +
                            " launch did not start beside the " + order[0]->name + " launch (" + passes[1]->error().message + ")");
        const auto l1 = Clock::now();
        passes[1] = run_timed_pass(*ctxs[1], places[1], t);
        pass_s[1] = seconds_since(l1);
      }
    } else {
      for (int i = 0; i < 2; ++i) {
        progress_line(plan.quiet, ctxs[i]->c.name + " side by side", "block " + std::to_string(k + 1) + ": " + order[i]->name);
        const auto l0 = Clock::now();
        passes[i] = run_timed_pass(*ctxs[i], places[i], t);
        pass_s[i] = seconds_since(l0);
      }
    }
    // The first block ran one launch at a time; from the second, interleave where both fit.
    if (k == 0 && plan.interleave) {
      if (*passes[0] && *passes[1]) {
        const TimedPass& pa = order[0] == &a ? **passes[0] : **passes[1];
        const TimedPass& pb = order[0] == &a ? **passes[1] : **passes[0];
        const RoomForBoth room = room_for_both(pa, pb, runs_on_gpu(a.ctx.c), a.name, b.name);
        interleave = room.fits;
        o.pinning.push_back(room.fits ? "launches interleaved from block 2: both up at once, their requests in turn (" + room.why + ")"
                                      : "launches one at a time: " + room.why);
      }
    }
    for (int i = 0; i < 2; ++i) {
      const PairedArm* arm = order[i];
      const CaseContext& ctx = *ctxs[i];
      ArmLaunch l;
      l.block = k;
      l.arm = arm->name;
      l.first = i == 0;
      // A block that fell back (the second launch could not start beside the first) ran one at a time.
      l.interleaved = together && interleave;
      const auto l0 = Clock::now();
      const Result<TimedPass>& pass = *passes[i];
      if (!pass) {
        l.errors.push_back(pass.error().message);
      } else {
        l.errors = pass->errors;
        l.units = launch_units(*pass);
        l.itl_per_prompt_ms = itl_per_prompt_ms(*pass);
        l.itl_gap_median_ms = itl_gap_median_ms(*pass);
        if (!pass->probes.empty()) l.itl_requests_ms = itl_requests_ms(*pass);
        l.reference_ms = pass->reference_ms;
        l.throughput_ms = pass->throughput_ms;
        l.throughput_samples_ms = pass->throughput_samples_ms;
        for (const auto& r : pass->requests) l.answers[r.prompt_id] = r.result.text;
        if (arm->evidence) {
          auto check = check_timed_log(pass->log_path, ctx.signatures, &*arm->evidence);
          if (!check)
            l.errors.push_back("log: " + check.error().message);
          else {
            l.signal_mismatches = check->mismatches;
            l.memory = launch_memory(*pass, check->log.scan);
          }
        }
        if (hook) hook(*arm, k, *pass);
      }
      // The kernel figures come from a second launch of the same arm with the probe attached, after
      // the timed ones: the probe's overhead never reaches the timed figures. It serves the job's load,
      // not the timed rounds: per token of that load, the nightly's definition (issue 41 item 3).
      if (plan.kernel_time && l.errors.empty()) probed_kernel_units(ctx, places[i], l);
      l.wall_s = pass_s[i] + seconds_since(l0);
      for (const auto& e : l.errors)
        o.errors.push_back(arm->name + " launch in block " + std::to_string(k + 1) + ": " + e);
      o.launches.push_back(std::move(l));
    }
    block_s.push_back(seconds_since(b0));
    o.blocks = k + 1;
    if (interrupted()) return false;  // said below: an interrupt is not a launch that failed
    if (!o.errors.empty()) {
      o.stopped = "a launch failed";
      return false;
    }
    return true;
  };
  SequentialSource source;
  source.add_block = add_block;
  source.look = [&](int blocks, const LookSchedule& schedule) {
    o.schedule = schedule;
    decide_paired(o, plan, schedule);
    if (o.looks++ == 0) {
      o.first_forecast = blocks;
      for (const auto& d : o.decisions)
        if (d.verdict == TimingVerdict::unresolved)
          o.first_forecast =
              d.likely_blocks && o.first_forecast ? std::optional<int>(std::max(*o.first_forecast, *d.likely_blocks)) : std::nullopt;
    }
    return LoopLook{o.decisions, o.guards};
  };
  // The default budget is a number of blocks: fixed in seconds at the first look (the first call),
  // from the blocks measured so far, never under the floor.
  source.affordable = [&](int blocks) {
    o.block_s = mean_block_s();
    if (o.looks == 0 && plan.budget_s <= 0) o.budget_s = std::max(plan.budget_blocks * o.block_s, plan.budget_floor_s);
    return std::min(plan.max_blocks, blocks + static_cast<int>(std::floor((o.budget_s - seconds_since(t0)) / o.block_s)));
  };
  const LoopResult loop = run_sequential(plan.first_blocks, plan.max_blocks, source);
  if (o.stopped.empty()) o.stopped = loop.stopped;
  if (restore && !runtime_cpus.empty()) ::sched_setaffinity(0, sizeof harness_cpus, &harness_cpus);
  if (interrupted()) {
    o.stopped = interrupted_text();
    o.errors.push_back(o.stopped);
  }
  o.wall_s = seconds_since(t0);
  // Blocks past the last look (a launch failed, an interrupt): decided on all of them for the report;
  // the run is incomplete then.
  if (loop.looked_at != o.blocks) decide_paired(o, plan, o.schedule.value_or(LookSchedule(plan.first_blocks, plan.max_blocks)));
  // Answers: the first launch of each arm is the reference; every later launch must match it.
  for (const auto& l : o.launches) {
    auto& ref = l.arm == o.arm_a ? o.answers_a : o.answers_b;
    for (const auto& [prompt, text] : l.answers) {
      auto it = ref.find(prompt);
      if (it == ref.end()) ref[prompt] = text;
      else if (it->second != text) {
        const std::string u = l.arm + ": " + prompt;
        if (std::find(o.unstable.begin(), o.unstable.end(), u) == o.unstable.end()) o.unstable.push_back(u);
      }
    }
  }
  return o;
}

}  // namespace fp
