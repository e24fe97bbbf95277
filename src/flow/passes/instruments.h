// The instruments the evidence pass adds to a launch to see better, each a separate part of the
// launch so that it can be taken off alone when the run breaks (flow/passes/instrument_retry.h):
//   device timings   the runtime data's device_timings env (ggml-vulkan's GGML_VK_PERF_LOGGER): level 3 on Vulkan
//   kernel probe     CUDA_INJECTION64_PATH and the probe's tally (flow/passes/gpu_probe.h): level 3 on CUDA
//   scheduler debug  the adapter's scheduler_debug_env (GGML_SCHED_DEBUG): level 2
//   verbose logging  the adapter's evidence_args in place of its timed_args (-v) and the rest of its
//                    evidence_env (LLAMA_ARG_LOG_VERBOSITY)
// Listed in that order: the order the evidence pass takes them off, the most recently added and the
// most intrusive first (device timings synchronise after every op; the probe sits in the driver).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "evidence/runtime_signatures.h"
#include "flow/passes/gpu_probe.h"
#include "runtime/adapter.h"

namespace fp {

struct Instrument {
  std::string name;                        // evidence/instrument_rules.h instrument_names()
  std::vector<std::string> levels;         // evidence levels it serves: unavailable while it is off
  std::map<std::string, std::string> env;  // what it adds to the runtime's environment
  std::vector<std::string> args;           // what it adds to the launch line (verbose logging: evidence_args)
  bool replaces_timed_args = false;        // verbose logging: its args stand in place of the adapter's timed_args
  std::string label() const;               // "device timings"
  // How it is turned on, for reports: "GGML_VK_PERF_LOGGER=1", "-v, LLAMA_ARG_LOG_VERBOSITY=5".
  std::string how() const;
};

// The instruments of an evidence pass, in the order they are taken off. `timings`: the runtime data's
// device timings when the case's backend has them, else null; `probe`: the kernel probe's plan (not
// attached: no probe). Verbose logging is listed even when it adds nothing the timed runs lack
// (a runtime without evidence_args and evidence_env): then it has nothing to take off and is left out.
std::vector<Instrument> evidence_instruments(const Adapter& adapter, const DeviceTimings* timings, const GpuProbePlan& probe);

// A launch's environment and extra launch-line arguments with the instruments `on`: the case's env
// plus each instrument's env (later instruments in `on` win), and the adapter's timed_args unless an
// instrument replaces them.
struct InstrumentedLaunch {
  std::map<std::string, std::string> env;
  std::vector<std::string> extra_args;
};
InstrumentedLaunch instrumented_launch(const std::map<std::string, std::string>& case_env, const Adapter& adapter,
                                       const std::vector<Instrument>& on);

// The instruments of `all` whose names are not in `off`, in order.
std::vector<Instrument> instruments_without(const std::vector<Instrument>& all, const std::vector<std::string>& off);
// The instrument named `name` in `all`, or null.
const Instrument* find_instrument(const std::vector<Instrument>& all, const std::string& name);

}  // namespace fp
