// A fixed, single-threaded CPU workload timed beside each launch: how fast this machine's cores are
// right now. A nightly golden comparison uses it to tell a slower build from a slower machine, which
// the other-load figure (measure/machine_load.h) cannot see: measured here, over 20 back-to-back
// same-build nights of cases/completion-realistic-long.json, the runtime's own CPU time per token
// rose from 1.00-1.10 to 1.16-1.39 ms (TTFT +15..+29%, 11 false alarms) while other processes took
// under 1% of the CPUs and /proc/stat showed no steal: the cores themselves had slowed (a VM's host,
// clocks). One thread only: a CPU quota of a container (`run --cpu-share`) caps the runtime's many
// threads, not one, so a cut quota still shows as a slower runtime, not as a slower machine. Being
// latency-bound and single-threaded it follows the runtime's own drift only loosely (over 20 quiet
// nights, r = 0.68 with its CPU time per token): measure/throughput_reference.h is the reference
// shaped like the runtime's work (r = 0.90).
#pragma once

#include <cstddef>

namespace fp {

// One pass of the workload: a dependent floating-point and memory sweep over kReferenceFloats
// floats (4 MiB: beyond a core's L2, as the runtime's weights are), `rounds` times. Returns a value
// that depends on every step (so the compiler keeps them all).
inline constexpr std::size_t kReferenceFloats = std::size_t{1} << 20;
double reference_workload(int rounds);

// The median wall time in milliseconds of `reps` passes of reference_workload(kReferenceRounds)
// (about 5 ms each on a 2-core EPYC VM); the median, so that one pass cut by a timer interrupt or
// a neighbour does not decide.
inline constexpr int kReferenceRounds = 4;
double time_reference_workload(int reps = 5);

}  // namespace fp
