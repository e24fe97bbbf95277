#include "golden/noise_band.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>

#include "measure/stats.h"
#include "util/text.h"

namespace fp {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// Measured with bench/sitting_spread.sh on this 2-core machine (bench/README.md section 7): 5
// sittings of 3 launches of completion-realistic-long, 30 s apart, while four other engineers
// compiled here (load average 8 to 20): between-sitting sd TTFT 9.5%, its p95 13.1%, server prompt
// time 9.4%, e2e 22.8%, CPU time per token 22.6% (llama.cpp's threads busy-wait at their barriers
// when a CPU is taken from them), per-token latency 74-77%. Capped at kMaxSittingSigma: beyond it
// not even a guard would see a halved decode speed (+100% must stay beyond 3 x sqrt 2 x the sd), and
// a machine that moves more than that between sittings needs the side-by-side gate, not a nightly.
// A quieter machine learns its own from its nights after kMinNights.
// GPU kernel time per token of the same build (gate-cuda-realistic-prefill, probed launches): on the
// golden's own H200 (same GPU UUID), 11 sittings of 3 launches over 8 minutes, 2026-12-02: within a
// sitting 0.12%, between sittings 0.19% (robust) -> 0.2%; from one H200 to another (5 machines,
// 2026-12-01/02: medians 0.938-0.948 us) about 0.4% -> 0.5%, which is also what a golden whose
// GPU is not known takes.
double sitting_sigma_rel(const std::string& figure, SittingScope scope) {
  if (starts_with(figure, "memory.")) return 0;  // memory has its own policy (golden/memory_policy.h)
  if (has(figure, "kernel_ms")) return scope == SittingScope::same_gpu ? 0.002 : 0.005;
  if (has(figure, "cpu_ms_per_token") || has(figure, "itl_ms") || has(figure, "tpot_ms") || has(figure, "decode_tokens") ||
      has(figure, "e2e_ms"))
    return kMaxSittingSigma;
  if (has(figure, "ttft_ms_p95")) return 0.15;
  return 0.10;  // TTFT, server timings, prompt and total throughput
}

// The H200 same-GPU sitting spread came from 11 sittings, estimated robustly: 10 changes at the
// median's efficiency.
double sitting_prior_df(const std::string& figure, SittingScope scope) {
  if (scope == SittingScope::same_gpu && has(figure, "kernel_ms") && !starts_with(figure, "memory.")) return kMadEfficiency * 10;
  return 0;
}

const char* sitting_sigma_source() { return "between sittings, measured here (bench/sitting_spread.sh)"; }
const char* sitting_sigma_source(const std::string& figure, SittingScope scope) {
  return scope == SittingScope::same_gpu && has(figure, "kernel_ms")
             ? "between sittings on the golden's own GPU, measured on the H200 (tests/gpu/llama-cuda/nightly_device.sh)"
             : sitting_sigma_source();
}

NightNoise night_noise(const std::vector<double>& nights, double prior_sigma, double prior_df) {
  NightNoise n;
  std::vector<double> v;
  for (double x : nights)
    if (std::isfinite(x)) v.push_back(x);
  if (v.size() > kNightsWindow) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(kNightsWindow));
  n.nights = v.size();
  if (v.size() < kMinNights) return n;
  std::vector<double> changes;
  for (size_t i = 1; i < v.size(); ++i) changes.push_back(std::fabs(v[i] - v[i - 1]));
  n.nights_sigma = kMadToSigma * median(changes) / std::sqrt(2.0);
  n.sigma = n.nights_sigma;
  double nu = kMadEfficiency * static_cast<double>(v.size() - 1);
  if (prior_df > 0 && std::isfinite(prior_sigma) && prior_sigma > 0) {
    n.sigma = std::sqrt((prior_df * prior_sigma * prior_sigma + nu * n.sigma * n.sigma) / (prior_df + nu));
    nu += prior_df;
    n.pooled = true;
  }
  n.df = nu;
  n.sigma_upper = n.sigma * std::sqrt(nu / boost::math::quantile(boost::math::chi_squared(nu), 1 - kNightsConfidence));
  n.usable = true;
  return n;
}

}  // namespace fp
