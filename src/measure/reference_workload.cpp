#include "measure/reference_workload.h"

#include <chrono>
#include <vector>

#include "measure/stats.h"

namespace fp {

double reference_workload(int rounds) {
  // Seeded with a fixed linear congruential sequence: the same work on every machine and run.
  static const std::vector<float> data = [] {
    std::vector<float> v(kReferenceFloats);
    unsigned s = 12345;
    for (float& x : v) {
      s = s * 1103515245u + 12345u;
      x = static_cast<float>((s >> 8) & 0xffff) / 65536.0f;
    }
    return v;
  }();
  double acc = 0;
  for (int r = 0; r < rounds; ++r) {
    float a = 0.5f + 0.01f * static_cast<float>(r);
    double sum = 0;
    for (float x : data) {
      a = a * 0.999f + x * 0.001f;  // a dependent chain: latency, not just bandwidth
      sum += static_cast<double>(a * x);
    }
    acc += sum;
  }
  return acc;
}

double time_reference_workload(int reps) {
  std::vector<double> ms;
  volatile double sink = 0;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = sink + reference_workload(kReferenceRounds);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

}  // namespace fp
