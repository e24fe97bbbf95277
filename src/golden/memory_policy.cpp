#include "golden/memory_policy.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace fp {
namespace {

std::string mib_figure(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string signed_pct(double change, double before) {
  if (!(std::fabs(before) > 0)) return "n/a";
  char buf[64];
  const double v = 100.0 * change / std::fabs(before);
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%+.0f%%" : "%+.3g%%", v);
  return buf;
}

const std::string kKvPrefix = "memory.kv_cache_mib.";

}  // namespace

bool is_memory_figure(const std::string& figure) { return starts_with(figure, kMemoryPrefix); }

double MemoryTolerance::at(double before) const { return std::max(relative * std::fabs(before), absolute_mib); }

MemoryTolerance memory_tolerance(const std::string& figure) {
  // The host peak RSS of llama-server moved by at most 0.2 MiB across launches here (realistic:
  // 89.51-89.73 MiB; tiny: 27.33-27.53 MiB, 3 launches each): the buffers' tolerance holds it.
  // GPU peaks are sampled every 250 ms (measure/gpu_sampler.h) and can miss a short-lived
  // allocation (one to three samples per launch on the H200): wider until measured there.
  if (figure == "memory.gpu_peak_mib") return {0.05, 64};
  return {kBufferRelativeTolerance, kBufferAbsoluteToleranceMib};
}

bool memory_missing_fails(const std::string& figure) {
  return figure != "memory.host_peak_rss_mib" && figure != "memory.gpu_peak_mib";
}

const char* to_string(MemoryStatus s) {
  switch (s) {
    case MemoryStatus::same: return "same";
    case MemoryStatus::grew: return "grew";
    case MemoryStatus::dropped: return "dropped";
  }
  return "?";
}

MemoryJudgement judge_memory(const std::string& figure, double before, double after) {
  MemoryJudgement j;
  j.before = before;
  j.after = after;
  j.change = after - before;
  const MemoryTolerance t = memory_tolerance(figure);
  j.tolerance = t.at(before);
  if (j.change > j.tolerance) j.status = MemoryStatus::grew;
  else if (-j.change > j.tolerance) j.status = MemoryStatus::dropped;
  const std::string values = mib_figure(before) + " -> " + mib_figure(after) + " MiB (" + (j.change >= 0 ? "+" : "") + mib_figure(j.change) +
                             " MiB, " + signed_pct(j.change, before) + ")";
  const std::string tol = "the tolerance of " + mib_figure(j.tolerance) + " MiB (" + mib_figure(100 * t.relative) + "%, at least " +
                          mib_figure(t.absolute_mib) + " MiB)";
  switch (j.status) {
    case MemoryStatus::grew: j.message = figure + " grew: " + values + ", beyond " + tol; break;
    case MemoryStatus::dropped: j.message = figure + " dropped: " + values + ", beyond " + tol + " (reported, not a failure)"; break;
    case MemoryStatus::same: j.message = figure + " same: " + values + ", within " + tol; break;
  }
  return j;
}

std::vector<std::string> kv_cache_devices(const std::map<std::string, double>& figures) {
  std::vector<std::string> out;
  for (const auto& [name, value] : figures)
    if (starts_with(name, kKvPrefix) && name.size() > kKvPrefix.size() && value > 0) out.push_back(name.substr(kKvPrefix.size()));
  return out;
}

std::optional<std::string> kv_cache_moved(const std::map<std::string, double>& before, const std::map<std::string, double>& after) {
  const std::vector<std::string> b = kv_cache_devices(before), a = kv_cache_devices(after);
  if (b.empty() || a.empty() || b == a) return std::nullopt;
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& d : v) s += (s.empty() ? "" : ", ") + d;
    return s;
  };
  std::string detail;
  std::set<std::string> all(b.begin(), b.end());
  all.insert(a.begin(), a.end());
  for (const auto& d : all) {
    auto vb = before.find(kKvPrefix + d), va = after.find(kKvPrefix + d);
    const bool in_b = std::find(b.begin(), b.end(), d) != b.end(), in_a = std::find(a.begin(), a.end(), d) != a.end();
    detail += (detail.empty() ? "" : "; ") + d + " " + (in_b ? mib_figure(vb->second) + " MiB" : std::string("none")) + " -> " +
              (in_a ? mib_figure(va->second) + " MiB" : std::string("none"));
  }
  return "KV CACHE MOVED: the KV cache was on " + list(b) + " and is on " + list(a) + " now (" + detail +
         "): a KV cache off the device it was on changes both speed and spare memory";
}

}  // namespace fp
