#include <iomanip>
#include <set>
#include <sstream>

#include "evidence/kernel_set.h"
#include "evidence/verdict_gpus.h"
#include "evidence/verdict_levels.h"
#include "util/text.h"

namespace fp::verdict_detail {
namespace {

// Level 3 when the expectation names an attention backend: did that backend's kernels run?
LevelFinding kernel_level_backend(const KernelSummary& k, const std::string& expected, LevelFinding f) {
  if (!contains(k.backends_with_patterns, expected)) {
    f.unavailable_why = "no kernel pattern for backend " + expected + " in the runtime data file (patterns for: " +
                        (k.backends_with_patterns.empty() ? std::string("none") : join(k.backends_with_patterns, ", ")) + ")";
    return f;
  }
  f.used = true;
  auto it = k.launches_by_backend.find(expected);
  long long launches = it == k.launches_by_backend.end() ? 0 : it->second;
  f.active = f.any_on_expected = launches > 0;
  std::ostringstream s;
  if (launches > 0) {
    s << launches << " " << expected << " kernel launches";
    for (const auto& n : k.top_by_backend.at(expected)) f.quotes.push_back(kernel_display_name(n));
  } else {
    s << "no " << expected << " kernel among " << k.records << " kernels";
  }
  std::vector<std::string> others;
  for (const auto& [backend, n] : k.launches_by_backend)
    if (backend != expected && n > 0) {
      others.push_back(backend + " " + std::to_string(n));
      for (const auto& name : k.top_by_backend.at(backend)) f.quotes.push_back(kernel_display_name(name));
    }
  if (!others.empty()) s << "; other backends' kernel launches: " << join(others, ", ");
  if (!f.quotes.empty()) s << " (" << quote(f.quotes.front()) << ")";
  if (k.processes > 1) s << "; tally of " << k.processes << " processes";
  f.summary = s.str();
  return f;
}

// Expected backends that are devices the kernel probe cannot see: neither the host nor a GPU of the
// runtime's gpu_backend pattern (a Vulkan device: CUPTI records CUDA kernels only).
std::vector<std::string> unprobed_devices(const VerdictInput& in, const Verdict& v) {
  const GpuDevices gpus(in.gpu_backend_pattern);
  std::vector<std::string> out;
  if (!gpus.valid() || !in.attention_backends.empty()) return out;
  for (const auto& e : v.expected_backends)
    if (e != kCpuBackend && !gpus.is_gpu(e)) out.push_back(e);
  return out;
}

}  // namespace

LevelFinding kernel_level(const VerdictInput& in, Verdict& v) {
  LevelFinding f{3, "kernels"};
  const KernelSummary* k = in.kernels;
  const std::string& expected = v.expected_backend;
  if (auto unseen = unprobed_devices(in, v); !unseen.empty()) {
    f.unavailable_why = "not applicable: the kernel probe (CUPTI) does not see what " + join(unseen, ",") +
                        " dispatches; levels 1 and 2 decide";
    return f;
  }
  if (!k) {
    f.unavailable_why = "no tally given" + hint(in, "kernels");
    return f;
  }
  if (!k->has_records()) {
    f.unavailable_why = "tally " + k->source + " has no kernel records (no evidence: the probe saw nothing" +
                        (k->status.empty() || k->status == "ok" ? std::string() : "; probe status " + k->status) +
                        (k->reason.empty() ? std::string() : ": " + k->reason) + ")";
    return f;
  }
  if (!in.attention_backends.empty() && !expected.empty()) return kernel_level_backend(*k, expected, f);
  const GpuDevices gpus(in.gpu_backend_pattern);
  std::vector<std::string> expected_gpus;
  for (const auto& e : v.expected_backends)
    if (gpus.is_gpu(e)) expected_gpus.push_back(e);
  if (!v.expected_backends.empty() && expected_gpus.empty()) {
    f.unavailable_why = "not applicable: the expected backend is " + expected + " and kernels show only the GPU";
    return f;
  }
  const std::vector<std::string> names = known_backends(in, v);
  for (const auto& [device, n] : k->fused_launches_by_device)
    if (n > 0) v.fused_kernels_by_backend[device_name(device, names, gpus)] = n;
  f.used = true;
  const bool per_device = k->devices_known && gpus.valid() && !expected_gpus.empty();
  long long on = k->fused_launches, off = 0;
  std::vector<std::string> missing;
  if (per_device) {
    on = 0;
    std::set<int> wanted;
    for (const auto& e : expected_gpus) {
      auto d = gpus.device(e);
      if (!d) continue;
      wanted.insert(*d);
      auto it = k->fused_launches_by_device.find(*d);
      if (it == k->fused_launches_by_device.end() || it->second == 0) missing.push_back(e);
    }
    for (const auto& [device, n] : k->fused_launches_by_device) (wanted.count(device) ? on : off) += n;
  }
  f.active = on > 0 && off == 0 && missing.empty();
  f.any_on_expected = on > 0;
  f.partial = on > 0 && off > 0;
  std::ostringstream s;
  if (k->fused_launches > 0) {
    s << std::fixed << std::setprecision(1) << k->fused_launches << " fused attention kernel launches, "
      << (100.0 * static_cast<double>(k->fused_ns) / static_cast<double>(k->total_ns ? k->total_ns : 1))
      << "% of GPU time";
    for (const auto& n : k->top_fused) f.quotes.push_back(kernel_display_name(n));
  } else {
    s << "no fused attention kernel (" << join(k->fused_patterns, " or ") << ") among " << k->records
      << " kernels";
    if (k->unfused_launches > 0) s << "; " << k->unfused_launches << " unfused attention launches";
    for (const auto& n : k->top_unfused) f.quotes.push_back(kernel_display_name(n));
  }
  if (per_device && k->fused_launches > 0) {
    std::vector<std::string> parts;
    for (const auto& [device, n] : k->fused_launches_by_device)
      if (n > 0) parts.push_back(device_name(device, names, gpus) + " " + std::to_string(n));
    s << "; by device: " << join(parts, ", ");
    if (!missing.empty()) s << "; none on " << join(missing, ",");
    if (off > 0) s << "; " << off << " on devices not expected";
  } else if (!k->devices_known && !expected_gpus.empty() && k->fused_launches > 0) {
    s << " (the tally has no device column: which GPU ran them is not known)";
  }
  if (!f.quotes.empty()) s << " (" << quote(f.quotes.front()) << ")";
  if (k->processes > 1) s << "; tally of " << k->processes << " processes";
  f.summary = s.str();
  return f;
}

}  // namespace fp::verdict_detail
