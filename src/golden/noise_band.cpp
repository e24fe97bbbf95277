#include "golden/noise_band.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>

#include "measure/stats.h"

namespace fp {
namespace {

bool starts(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// Measured with bench/sitting_spread.sh on this 2-core machine (bench/README.md section 7): the
// between-sitting part of each figure kind, the largest seen over the cases measured, rounded up.
double sitting_sigma_rel(const std::string& figure) {
  if (starts(figure, "memory.")) return 0;  // memory has its own policy (golden/memory_policy.h)
  if (has(figure, "kernel_ms")) return 0.005;      // GPU kernel time: 0.4% between two H200 machines (issue 21)
  if (has(figure, "cpu_ms_per_token")) return 0.03;
  if (has(figure, "server_")) return 0.04;
  if (has(figure, "itl_ms") || has(figure, "tpot_ms") || has(figure, "decode_tokens")) return 0.04;
  return 0.05;  // host-clock TTFT, e2e, prompt and total throughput
}

const char* sitting_sigma_source() { return "between sittings, measured here (bench/sitting_spread.sh)"; }

NightNoise night_noise(const std::vector<double>& nights) {
  NightNoise n;
  std::vector<double> v;
  for (double x : nights)
    if (std::isfinite(x)) v.push_back(x);
  if (v.size() > kNightsWindow) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(kNightsWindow));
  n.nights = v.size();
  if (v.size() < kMinNights) return n;
  std::vector<double> changes;
  for (size_t i = 1; i < v.size(); ++i) changes.push_back(std::fabs(v[i] - v[i - 1]));
  n.sigma = kMadToSigma * median(changes) / std::sqrt(2.0);
  const double nu = kMadEfficiency * static_cast<double>(v.size() - 1);
  n.sigma_upper = n.sigma * std::sqrt(nu / boost::math::quantile(boost::math::chi_squared(nu), 1 - kNightsConfidence));
  n.usable = true;
  return n;
}

}  // namespace fp
