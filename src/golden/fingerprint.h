// What identifies the system under test. Goldens live in golden/<id>/, where the id is readable
// (cpu, cores, gpu and driver when present, runtime and its build) and the full fingerprint is
// stored beside it as fingerprint.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fp {

struct Fingerprint {
  std::string cpu_model;
  unsigned cores = 0;
  std::string gpu_name, gpu_driver, cuda_version;  // empty without NVML
  std::string runtime, runtime_version, runtime_build;
  std::string model_sha256;
  std::string flashproof_version = FLASHPROOF_VERSION;

  // e.g. "intel-xeon-processor-2c-llama-server-b11669" or "nvidia-h200-580.159.04-llama-server-b7000".
  std::string id() const;
  nlohmann::ordered_json to_json() const;
};

// CPU model and cores of this machine (/proc/cpuinfo); GPU fields from NVML when present.
Fingerprint machine_fingerprint();

// Lowercase, runs of anything but [a-z0-9.] become one '-', trimmed of '-'.
std::string slug(const std::string& s);

}  // namespace fp
