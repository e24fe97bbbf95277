#include "evidence/verdict_gpus.h"

#include <set>

namespace fp::verdict_detail {

std::string device_name(int device, const std::vector<std::string>& backends, const GpuDevices& gpus) {
  if (device < 0) return "device ?";
  for (const auto& b : backends)
    if (gpus.device(b) == device) return b;
  return "device " + std::to_string(device);
}

std::vector<std::string> known_backends(const VerdictInput& in, const Verdict& v) {
  std::vector<std::string> out = v.expected_backends;
  out.insert(out.end(), in.gpu_backends.begin(), in.gpu_backends.end());
  if (in.placement) {
    for (const auto& [b, n] : in.placement->fused_nodes) out.push_back(b);
    for (const auto& [b, n] : in.placement->unfused_nodes) out.push_back(b);
  }
  if (in.log)
    for (const auto& [b, mib] : in.log->kv_mib_by_device()) out.push_back(b);
  return out;
}

std::vector<std::string> all_gpus(const VerdictInput& in) {
  if (!in.gpu_backends.empty()) return in.gpu_backends;
  const GpuDevices gpus(in.gpu_backend_pattern);
  std::set<std::string> seen;
  if (in.placement) {
    for (const auto& [b, n] : in.placement->fused_nodes) seen.insert(b);
    for (const auto& [b, n] : in.placement->unfused_nodes) seen.insert(b);
    for (const auto& [key, candidates] : in.placement->ambiguous) seen.insert(candidates.begin(), candidates.end());
  }
  if (in.log)
    for (const auto& [b, mib] : in.log->kv_mib_by_device()) seen.insert(b);
  std::vector<std::string> out;
  for (const auto& b : seen)
    if (gpus.is_gpu(b)) out.push_back(b);
  return out;
}

}  // namespace fp::verdict_detail
