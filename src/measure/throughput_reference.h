// A second machine-speed reference, shaped like the runtime's own CPU work: float matrix-vector
// products (SIMD multiply-adds, throughput-bound) split by rows over all the CPUs this process may
// run on, the threads meeting at a spinning barrier after each "layer", as ggml's CPU backend runs
// a graph (ggml_barrier spins on an atomic between ops). One slow or descheduled thread delays them
// all. The single-threaded latency chain (measure/reference_workload.h) is blind to that: over 3
// quiet same-build nights of cases/completion-realistic-long.json the runtime's CPU time per token
// rose +13..+20% while the chain read 4% faster (bench/README.md section 7). Contention for a core's
// SIMD ports from an SMT sibling (a neighbour VM) or a vCPU of the set stolen shows here.
#pragma once

#include <cstddef>

namespace fp {

// The weights: kThroughputRows x kThroughputRows floats (4 MiB: beyond a core's L2, as the runtime's
// weights are), seeded, the same on every run.
inline constexpr std::size_t kThroughputRows = 1024;

// One pass: `layers` matrix-vector products, each layer's output (squashed into (-1, 1)) the next
// one's input, rows split over `threads` threads (at least 1) that meet at a barrier after each
// layer. Returns a checksum of the last layer's output; each row is computed the same way by
// whichever thread owns it, so the value does not depend on `threads`.
double throughput_workload(int threads, int layers);

// The threads the workload uses: the CPUs this process may run on (sched_getaffinity: the runtime's
// threads default to the cores), at most kThroughputMaxThreads; 1 when unknown.
inline constexpr int kThroughputMaxThreads = 16;
int throughput_threads();

// The median wall time in milliseconds of `reps` passes of throughput_workload(throughput_threads(),
// kThroughputLayers), the threads created once for all passes (about 5 ms a pass on a 2-core EPYC
// VM); the median, so that one pass cut by a timer interrupt does not decide.
inline constexpr int kThroughputLayers = 96;
double time_throughput_reference(int reps = 5);

}  // namespace fp
