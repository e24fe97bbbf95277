#include "measure/throughput_reference.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "measure/stats.h"

namespace fp {
namespace {

// Four SIMD lanes, written out (GCC/Clang vector extension): the build runs at -O1, where the
// compiler does not vectorise a loop by itself; this is SSE multiply-adds at any level.
typedef float f32x4 __attribute__((vector_size(16)));

const std::vector<float>& weights() {
  // Seeded with a fixed linear congruential sequence: the same work on every machine and run.
  static const std::vector<float> w = [] {
    std::vector<float> v(kThroughputRows * kThroughputRows);
    unsigned s = 54321;
    for (float& x : v) {
      s = s * 1103515245u + 12345u;
      x = static_cast<float>((s >> 8) & 0xffff) / 32768.0f - 1.0f;  // [-1, 1)
    }
    return v;
  }();
  return w;
}

// One row's dot product: four independent 4-lane accumulators (16 multiply-adds in flight, so the
// SIMD units' throughput bounds it, not one add's latency), summed in a fixed order. Written out by
// hand: at -O1 an accumulator array would live on the stack, one store-to-load chain per add.
f32x4 load4(const float* p) {
  f32x4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
float dot_row(const float* w, const float* x) {
  f32x4 a0 = {}, a1 = {}, a2 = {}, a3 = {};
  for (std::size_t j = 0; j < kThroughputRows; j += 16) {
    a0 += load4(w + j) * load4(x + j);
    a1 += load4(w + j + 4) * load4(x + j + 4);
    a2 += load4(w + j + 8) * load4(x + j + 8);
    a3 += load4(w + j + 12) * load4(x + j + 12);
  }
  const f32x4 s = (a0 + a1) + (a2 + a3);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// ggml_barrier's shape: the last thread in bumps the generation, the others spin on it (a pause
// between looks), never sleeping; so a descheduled thread holds the others spinning.
class SpinBarrier {
 public:
  explicit SpinBarrier(int threads) : threads_(threads) {}
  void wait() {
    if (threads_ == 1) return;
    const int gen = passed_.load(std::memory_order_relaxed);
    if (arrived_.fetch_add(1, std::memory_order_seq_cst) == threads_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      passed_.fetch_add(1, std::memory_order_seq_cst);
      return;
    }
    while (passed_.load(std::memory_order_acquire) == gen) relax();
  }

 private:
  static void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<int> passed_{0};
};

// Runs `reps` passes of `layers` layers on `threads` threads (created once; the calling thread is
// thread 0), the wall time of each pass in `ms` when given. Returns the last pass's checksum.
double run_passes(int threads, int layers, int reps, std::vector<double>* ms) {
  threads = std::max(1, threads);
  const std::vector<float>& w = weights();
  std::vector<float> in(kThroughputRows), out(kThroughputRows);
  SpinBarrier barrier(threads);
  double checksum = 0;
  auto body = [&](int t) {
    const std::size_t r0 = kThroughputRows * t / threads, r1 = kThroughputRows * (t + 1) / threads;
    for (int rep = 0; rep < reps; ++rep) {
      if (t == 0)
        for (std::size_t i = 0; i < kThroughputRows; ++i) in[i] = static_cast<float>(i % 7) / 7.0f - 0.4f;
      barrier.wait();
      const auto t0 = std::chrono::steady_clock::now();
      // Double-buffered: layer l reads one buffer and writes the other, so one barrier per layer
      // suffices (nobody still reads the buffer the next layer writes).
      for (int l = 0; l < layers; ++l) {
        const std::vector<float>& x = l % 2 == 0 ? in : out;
        std::vector<float>& y = l % 2 == 0 ? out : in;
        for (std::size_t r = r0; r < r1; ++r) {
          const float v = dot_row(w.data() + r * kThroughputRows, x.data());
          y[r] = v / (1.0f + std::fabs(v));
        }
        barrier.wait();
      }
      if (t != 0) continue;
      if (ms) ms->push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      const std::vector<float>& last = layers % 2 == 0 ? in : out;
      checksum = 0;
      for (std::size_t i = 0; i < kThroughputRows; ++i) checksum += static_cast<double>(last[i]) * static_cast<double>(i + 1);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto& th : pool) th.join();
  return checksum;
}

}  // namespace

double throughput_workload(int threads, int layers) { return run_passes(threads, layers, 1, nullptr); }

int throughput_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::clamp(CPU_COUNT(&set), 1, kThroughputMaxThreads);
}

double time_throughput_reference(int reps) {
  std::vector<double> ms;
  run_passes(throughput_threads(), kThroughputLayers, reps, &ms);
  return median(ms);
}

}  // namespace fp
