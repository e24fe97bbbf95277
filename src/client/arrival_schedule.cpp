#include "client/arrival_schedule.h"

#include <cmath>

#include "util/splitmix64.h"

namespace fp {

std::vector<double> poisson_arrivals(size_t n, double rate_per_s, uint64_t seed) {
  std::vector<double> at(n, 0.0);
  if (n == 0 || !(rate_per_s > 0) || std::isinf(rate_per_s)) return at;
  SplitMix64 rng(seed);
  double t = 0;
  for (double& a : at) {
    t += -std::log1p(-rng.uniform()) / rate_per_s;  // exponential gap, mean 1/rate
    a = t;
  }
  const double scale = (static_cast<double>(n) / rate_per_s) / at.back();
  for (double& a : at) a *= scale;
  return at;
}

uint64_t arrival_seed(int case_seed, int level, int round) {
  SplitMix64 mix(static_cast<uint64_t>(static_cast<uint32_t>(case_seed)) ^
                 (static_cast<uint64_t>(static_cast<uint32_t>(level)) << 32));
  uint64_t s = mix.next();
  for (int i = 0; i <= round; ++i) s = mix.next();
  return s;
}

}  // namespace fp
