// GPU naming for the verdict: backend names and the device numbers the kernel probe records
// (CUDA1 <-> 1), the backends a verdict knows of, and what "all-gpus" means on this machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evidence/verdict.h"
#include "util/regex.h"

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
    auto re = Regex::compile(pattern);
    if (!re) return;
    re_ = std::move(*re);
    valid_ = true;
  }
  // Whether a pattern was given and compiles.
  bool valid() const { return valid_; }
  // The device number of a GPU backend (CUDA1 -> 1), none for another backend.
  std::optional<int> device(const std::string& backend) const {
    RegexMatch m;
    if (!valid_ || !regex_match(backend, re_, m) || !m[1].matched || m[1].length > 9 ||
        m.str(1).find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoi(m.str(1));
  }
  // Whether `backend` is a GPU: it matches the pattern, or (without one) it is not the host.
  bool is_gpu(const std::string& backend) const { return valid_ ? device(backend).has_value() : backend != kCpuBackend; }

 private:
  Regex re_;
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
