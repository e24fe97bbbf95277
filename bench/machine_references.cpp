// Which machine reference sees what slows the runtime's decode (issue 22)? Prints, on one line, the
// median wall time in ms of: the throughput reference the gate times (measure/throughput_reference.h:
// 4 MiB of weights, compute-bound), then float matrix-vector passes over WEIGHTS_MIB of weights
// split over all CPUs (memory-bound, as decode is), 5 passes each. bench/decode_covariates.sh runs it
// around llama-bench over minutes and fits each against the runtime's own timings.
//   usage: machine_references [WEIGHTS_MIB...]   (default 20 96: the realistic model's size, and
//          beyond any cache this VM's L3 could hold)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "measure/throughput_reference.h"

namespace {

double matvec_ms(const std::vector<float>& w, std::size_t cols, std::vector<float>& x, std::vector<float>& y, int threads) {
  const std::size_t rows = y.size();
  auto part = [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const float* row = &w[r * cols];
      float s = 0;
      for (std::size_t c = 0; c < cols; ++c) s += row[c] * x[c];
      y[r] = s;
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(part, rows * t / threads, rows * (t + 1) / threads);
  part(0, rows / threads);
  for (auto& t : pool) t.join();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoul(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {20, 96};
  std::printf("%.3f", fp::time_throughput_reference(5));
  const int threads = fp::throughput_threads();
  for (std::size_t mib : sizes) {
    const std::size_t cols = 1024, rows = std::max<std::size_t>(1, mib * 1024 * 1024 / sizeof(float) / cols);
    std::vector<float> w(rows * cols), x(cols, 1.0f), y(rows);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 13) * 0.01f;
    matvec_ms(w, cols, x, y, threads);  // pages touched, caches warm
    std::vector<double> t;
    for (int i = 0; i < 5; ++i) t.push_back(matvec_ms(w, cols, x, y, threads));
    std::sort(t.begin(), t.end());
    std::printf(" %.3f", t[2]);
  }
  std::printf("\n");
  return 0;
}
