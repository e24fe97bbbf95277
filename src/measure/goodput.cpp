#include "measure/goodput.h"

#include <cmath>
#include <cstdio>

namespace fp {
namespace {

// Met when there is no target, else when measured and at most the target.
bool within(double value, double target) { return std::isnan(target) || (!std::isnan(value) && value <= target); }

}  // namespace

bool LatencyTargets::any() const { return !std::isnan(ttft_ms) || !std::isnan(tpot_ms) || !std::isnan(e2e_ms); }

std::string LatencyTargets::text() const {
  std::string out;
  auto add = [&](const char* name, double v) {
    if (std::isnan(v)) return;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s <= %g", name, v);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  };
  add("ttft_ms", ttft_ms);
  add("tpot_ms", tpot_ms);
  add("e2e_ms", e2e_ms);
  return out;
}

bool meets_targets(const RequestLatency& r, const LatencyTargets& t) {
  return within(r.ttft_ms, t.ttft_ms) && within(r.tpot_ms, t.tpot_ms) && within(r.e2e_ms, t.e2e_ms);
}

Goodput goodput(const std::vector<RequestLatency>& requests, const LatencyTargets& t, double duration_s) {
  Goodput g;
  g.requests = requests.size();
  for (const auto& r : requests) g.good += meets_targets(r, t);
  if (g.requests > 0) g.share = static_cast<double>(g.good) / static_cast<double>(g.requests);
  if (duration_s > 0) g.per_s = static_cast<double>(g.good) / duration_s;
  return g;
}

}  // namespace fp
