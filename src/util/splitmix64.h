// splitmix64 (Steele, Lea & Flood 2014): a tiny, fully specified generator, identical on every
// platform (unlike the standard library's distributions), for everything flashproof draws from a
// seed: permutation tests, bootstrap resamples, arrival schedules, filler text.
#pragma once

#include <cstdint>

namespace fp {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, bound) (bound >= 1), without modulo bias.
  uint64_t below(uint64_t bound);
  // Uniform in [0, 1), 53 bits.
  double uniform();

 private:
  uint64_t state_;
};

}  // namespace fp
