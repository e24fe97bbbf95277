// The runtime's thread count when the harness pins it to a set of CPUs (the side-by-side gate gives
// the client a CPU of its own and the runtime the rest).
//
// llama.cpp sizes its threads from the machine's CPU count, not from its affinity mask: pinned to
// 15 of 16 CPUs, llama-server still starts 16 OpenMP threads, two of them share a CPU, and every
// graph's barrier waits for the one the scheduler put aside. llama-bench on this repository's
// realistic model, pinned to one CPU (taskset -c 0, -fa 1, 3 repetitions): -t 1 decodes 722-730
// tokens/s, -t 2 435-456 (-39%); prompt 883-887 vs 866-878 tokens/s, with a spread of up to 31.
// So the harness sizes the runtime's threads to its CPUs, through the runtime data's
// "threads_args", unless the case sets them itself or the runtime's own default already fits
// ("threads_default": llama.cpp starts one thread per physical core, so an 8-core machine with SMT
// keeps its 8 threads on 15 pinned CPUs, as deployed). (On the H200 with every layer on the GPU, -t 15
// against 16 threads made no difference: the bursts there come from elsewhere,
// fixtures/logs/h200-live/gate/README.md round 7.)
#pragma once

#include <string>
#include <vector>

#include "runtime/adapter.h"

namespace fp {

struct ThreadArgs {
  std::vector<std::string> args;  // appended to the launch line; empty: none
  std::string note;               // one plain line for the report: what was done and why
  bool oversubscribed = false;    // the case asks for more threads than the runtime has CPUs
};

// `case_argv` is the case's launch line (before expansion), `cpus` how many CPUs the runtime is
// pinned to (> 0), `default_threads` how many it would start by itself (runtime_default_threads).
ThreadArgs thread_args_for_cpus(const Adapter& adapter, const std::vector<std::string>& case_argv, int cpus,
                                int default_threads);

// What the runtime starts by itself on this machine, from the runtime data's threads_default:
// "physical_cores" (the distinct cores of /sys/devices/system/cpu/cpu*/topology/thread_siblings) or
// "cpus" (every online CPU; also the answer when sysfs cannot tell).
int runtime_default_threads(const Adapter& adapter);

}  // namespace fp
