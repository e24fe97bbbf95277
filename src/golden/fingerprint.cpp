#include "golden/fingerprint.h"

#include <fstream>
#include <thread>

#include "util/text.h"

namespace fp {

std::string slug(const std::string& s) {
  std::string out;
  bool dash = false;
  for (char c : s) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.') {
      if (dash && !out.empty()) out += '-';
      out += l;
      dash = false;
    } else {
      dash = true;
    }
  }
  return out;
}

std::string Fingerprint::id() const {
  std::string hw = gpu_name.empty() ? slug(cpu_model) + "-" + std::to_string(cores) + "c"
                                    : slug(gpu_name) + "-" + slug(gpu_driver);
  std::string build = runtime_build.empty() ? slug(runtime_version) : slug(runtime_build);
  return hw + "-" + slug(runtime) + "-" + build;
}

nlohmann::ordered_json Fingerprint::to_json() const {
  return {{"id", id()},
          {"cpu_model", cpu_model},
          {"cores", cores},
          {"gpu_name", gpu_name},
          {"gpu_driver", gpu_driver},
          {"cuda_version", cuda_version},
          {"runtime", runtime},
          {"runtime_version", runtime_version},
          {"runtime_build", runtime_build},
          {"model_sha256", model_sha256},
          {"flashproof_version", flashproof_version}};
}

Fingerprint machine_fingerprint() {
  Fingerprint f;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (starts_with(line, "model name")) {
      f.cpu_model = trim(line.substr(line.find(':') + 1));
      break;
    }
  if (f.cpu_model.empty()) f.cpu_model = "unknown-cpu";
  f.cores = std::thread::hardware_concurrency();
  return f;
}

}  // namespace fp
