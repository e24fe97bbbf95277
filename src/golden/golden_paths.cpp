#include "golden/golden_paths.h"

#include <filesystem>

namespace fp {

namespace fs = std::filesystem;

GoldenPaths golden_paths(const std::string& golden_root, const std::string& fingerprint_id, const std::string& case_name) {
  GoldenPaths p;
  p.dir = golden_root + "/" + fingerprint_id;
  p.golden_file = p.dir + "/" + case_name + ".json";
  p.answers_dir = p.dir + "/" + case_name + "/answers";
  p.machine_fingerprint_file = p.dir + "/fingerprint.json";
  p.case_fingerprint_file = p.dir + "/" + case_name + "/fingerprint.json";
  p.verdict_file = p.dir + "/" + case_name + "/verdict.json";
  return p;
}

Result<std::optional<Fingerprint>> load_golden_fingerprint(const GoldenPaths& paths) {
  for (const auto& file : {paths.case_fingerprint_file, paths.machine_fingerprint_file}) {
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;
    FP_TRY(Fingerprint f, load_fingerprint(file));
    return std::optional<Fingerprint>(f);
  }
  return std::optional<Fingerprint>();
}

}  // namespace fp
