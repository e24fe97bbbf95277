#include "runtime/ctest_gpus.h"

#include <cstdlib>
#include <vector>

#include "util/text.h"

namespace fp {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

Result<std::optional<std::string>> ctest_gpu_ids(const GetEnv& getenv) {
  const char* count_text = getenv("CTEST_RESOURCE_GROUP_COUNT");
  if (!count_text || !*count_text) return std::optional<std::string>();
  if (!all_digits(count_text) || std::string(count_text).size() > 4)
    return make_error("CTEST_RESOURCE_GROUP_COUNT = " + quote(count_text) + ": expected a whole number");
  const int count = std::atoi(count_text);
  std::vector<std::string> ids;
  for (int g = 0; g < count; ++g) {
    const std::string var = "CTEST_RESOURCE_GROUP_" + std::to_string(g) + "_GPUS";
    const char* value = getenv(var.c_str());
    if (!value || !*value) continue;  // this group holds other resources
    for (const auto& entry : split(value, ';')) {
      // "id:3,slots:1"
      std::string id;
      for (const auto& field : split(entry, ',')) {
        if (field.rfind("id:", 0) == 0) id = field.substr(3);
        else if (field.rfind("slots:", 0) != 0)
          return make_error(var + " = " + quote(value) + ": expected entries like id:0,slots:1 separated by ';'");
      }
      if (id.empty() || id.find_first_of(",; ") != std::string::npos)
        return make_error(var + " = " + quote(value) + ": an entry without a GPU id (expected id:0,slots:1)");
      ids.push_back(id);
    }
  }
  if (ids.empty()) return std::optional<std::string>();
  return std::optional<std::string>(join(ids, ","));
}

Result<std::optional<std::string>> ctest_gpu_ids() {
  return ctest_gpu_ids([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace fp
