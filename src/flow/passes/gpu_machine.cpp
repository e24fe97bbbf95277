#include "flow/passes/gpu_machine.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "measure/nvml.h"
#include "runtime/ctest_gpus.h"
#include "util/text.h"
#include "util/regex.h"

namespace fp {
namespace {

Result<int> gpu_count_text(const std::string& text, const std::string& where) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
    return make_error(where + " = " + quote(text) + ": expected the number of GPUs this machine has, a whole number 0..9999");
  return std::stoi(text);
}

Result<std::optional<GpuDeclaration>> from_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return make_error(path + " (the machine file): " + text.error().message);
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("gpus") || !j["gpus"].is_number_integer() || j["gpus"].get<long long>() < 0 ||
      j["gpus"].get<long long>() > 9999)
    return make_error(path + ": field \"gpus\": expected {\"gpus\": N}, N the number of GPUs this machine has (0..9999)");
  for (const auto& [k, v] : j.items())
    if (k != "gpus" && k != "comment") return make_error(path + ": unknown field " + quote(k) + "; valid: gpus, comment");
  int n = j["gpus"].get<int>();
  if (n == 0) return std::optional<GpuDeclaration>();
  return std::optional<GpuDeclaration>(GpuDeclaration{n, path});
}

}  // namespace

Result<std::optional<GpuDeclaration>> declared_gpus(const GetEnvFn& getenv, const std::string& default_file) {
  if (const char* v = getenv(kExpectGpusVar); v && *v) {
    FP_TRY(int n, gpu_count_text(v, kExpectGpusVar));
    if (n == 0) return std::optional<GpuDeclaration>();
    return std::optional<GpuDeclaration>(GpuDeclaration{n, std::string(kExpectGpusVar) + "=" + v});
  }
  if (const char* f = getenv(kMachineFileVar); f && *f) return from_file(f);
  std::error_code ec;
  if (!default_file.empty() && std::filesystem::exists(default_file, ec)) return from_file(default_file);
  return std::optional<GpuDeclaration>();
}

Result<std::optional<GpuDeclaration>> declared_gpus() {
  return declared_gpus([](const char* name) { return std::getenv(name); });
}

int visible_gpus() {
  auto count_list = [](const std::string& list) {
    return list.empty() ? 0 : static_cast<int>(std::count(list.begin(), list.end(), ',')) + 1;
  };
  if (auto ids = ctest_gpu_ids(); ids && *ids) return count_list(**ids);
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v) return count_list(v);
  auto nvml = Nvml::open();
  if (!nvml) return 0;
  auto n = nvml->gpu_count();
  return n ? static_cast<int>(*n) : 0;
}

int gpus_needed(const Case& c, const RuntimeSignatures& sigs, int all_gpus) {
  int needed = 0;
  for (const auto& b : c.expect.backends) {
    if (b == "all-gpus") {
      needed = std::max(needed, std::max(all_gpus, 1));
      continue;
    }
    if (!sigs.gpu_backend) continue;
    RegexMatch m;
    if (regex_match(b, sigs.gpu_backend->regex, m) && m[1].matched && m[1].length <= 9 &&
        m.str(1).find_first_not_of("0123456789") == std::string::npos)
      needed = std::max(needed, std::stoi(m.str(1)) + 1);
  }
  return needed;
}

}  // namespace fp
