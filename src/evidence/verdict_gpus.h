// GPU naming for the verdict: backend names and the device numbers the kernel probe records
// (CUDA1 <-> 1), the backends a verdict knows of, and what "all-gpus" means on this machine.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "evidence/verdict.h"

namespace fp::verdict_detail {

// ggml and most runtimes name the host backend this; kernels (level 3) say nothing about it.
inline constexpr const char* kCpuBackend = "CPU";

// GPU backend names and the device numbers the kernel probe records (CUDA1 <-> 1).
class GpuDevices {
 public:
  // `pattern`: the runtime's gpu_backend regex, group 1 the device number; "" or an invalid one
  // knows no device.
  explicit GpuDevices(const std::string& pattern) {
    if (pattern.empty()) return;
    try {
      re_ = std::regex(pattern);
      valid_ = true;
    } catch (const std::regex_error&) {
    }
  }
  // Whether a pattern was given and compiles.
  bool valid() const { return valid_; }
  // The device number of a GPU backend (CUDA1 -> 1), none for another backend.
  std::optional<int> device(const std::string& backend) const {
    std::smatch m;
    if (!valid_ || !std::regex_match(backend, m, re_) || m.size() < 2) return std::nullopt;
    return std::stoi(m[1].str());
  }
  // Whether `backend` is a GPU: it matches the pattern, or (without one) it is not the host.
  bool is_gpu(const std::string& backend) const { return valid_ ? device(backend).has_value() : backend != kCpuBackend; }

 private:
  std::regex re_;
  bool valid_ = false;
};

// The name a person reads for a probe device: the backend in `backends` that maps to it, else
// "device N" ("device ?" for an unknown device).
std::string device_name(int device, const std::vector<std::string>& backends, const GpuDevices& gpus);

// Every backend the verdict has heard of: expected ones, the machine's GPUs, those placement and
// the KV cache name.
std::vector<std::string> known_backends(const VerdictInput& in, const Verdict& v);

// "all-gpus": the machine's GPUs when given, else every GPU backend the log names.
std::vector<std::string> all_gpus(const VerdictInput& in);

}  // namespace fp::verdict_detail
