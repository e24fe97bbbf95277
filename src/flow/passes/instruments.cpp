#include "flow/passes/instruments.h"

#include <algorithm>

#include "evidence/instrument_rules.h"
#include "util/text.h"

namespace fp {

std::string Instrument::label() const { return instrument_label(name); }

std::string Instrument::how() const {
  std::vector<std::string> parts;
  if (!args.empty()) parts.push_back(join(args, " "));
  for (const auto& [k, v] : env) parts.push_back(k + "=" + v);
  return parts.empty() ? std::string("nothing") : join(parts, ", ");
}

std::vector<Instrument> evidence_instruments(const Adapter& adapter, const DeviceTimings* timings, const GpuProbePlan& probe) {
  std::vector<Instrument> out;
  if (timings) out.push_back({"device_timings", {"kernels"}, timings->env, {}, false});
  if (probe.attached) out.push_back({"kernel_probe", {"kernels"}, probe.env, {}, false});
  Instrument sched{"scheduler_debug", adapter.scheduler_debug_levels, {}, {}, false};
  Instrument verbose{"verbose_logging", adapter.verbose_logging_levels, {}, adapter.evidence_args, true};
  for (const auto& [k, v] : adapter.evidence_env) {
    const bool is_sched = std::find(adapter.scheduler_debug_env.begin(), adapter.scheduler_debug_env.end(), k) !=
                          adapter.scheduler_debug_env.end();
    (is_sched ? sched : verbose).env[k] = v;
  }
  if (!sched.env.empty()) out.push_back(sched);
  if (!verbose.env.empty() || verbose.args != adapter.timed_args) out.push_back(verbose);
  return out;
}

InstrumentedLaunch instrumented_launch(const std::map<std::string, std::string>& case_env, const Adapter& adapter,
                                       const std::vector<Instrument>& on) {
  InstrumentedLaunch l;
  l.env = case_env;
  l.extra_args = adapter.timed_args;
  // Verbose logging's environment first, as the adapter's evidence_env always was: the instruments
  // of flashproof's own (probe, device timings) over it.
  std::vector<const Instrument*> order;
  for (const auto& i : on) order.push_back(&i);
  std::stable_sort(order.begin(), order.end(), [](const Instrument* a, const Instrument* b) {
    auto rank = [](const Instrument* i) { return i->name == "verbose_logging" ? 0 : i->name == "scheduler_debug" ? 1 : 2; };
    return rank(a) < rank(b);
  });
  for (const Instrument* i : order) {
    for (const auto& [k, v] : i->env) l.env[k] = v;
    if (i->replaces_timed_args) l.extra_args = i->args;
  }
  return l;
}

std::vector<Instrument> instruments_without(const std::vector<Instrument>& all, const std::vector<std::string>& off) {
  std::vector<Instrument> out;
  for (const auto& i : all)
    if (std::find(off.begin(), off.end(), i.name) == off.end()) out.push_back(i);
  return out;
}

const Instrument* find_instrument(const std::vector<Instrument>& all, const std::string& name) {
  for (const auto& i : all)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace fp
