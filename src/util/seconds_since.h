// Elapsed wall time on the steady clock, in seconds: what the runners time their phases with.
#pragma once

#include <chrono>

namespace fp {

// Seconds from t0 to now on std::chrono::steady_clock.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace fp
