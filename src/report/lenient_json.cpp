#include "report/lenient_json.h"

#include <cmath>

#include "util/text.h"

namespace fp::html {

using json = nlohmann::json;

std::string str(const json& j, std::initializer_list<const char*> path, const std::string& fallback) {
  const json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return fallback;
    cur = &(*cur)[k];
  }
  return cur->is_string() ? cur->get<std::string>() : cur->is_null() ? fallback : cur->dump();
}

double dbl(const json& j, const char* key, double fallback) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return fallback;
  return j[key].get<double>();
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::vector<double> samples_of(const json& fig) {
  std::vector<double> out;
  if (fig.is_object() && fig.contains("samples") && fig["samples"].is_array())
    for (const auto& v : fig["samples"])
      if (v.is_number() && std::isfinite(v.get<double>())) out.push_back(v.get<double>());
  return out;
}

bool lower_is_better(const json& fig) { return str(fig, {"direction"}, "lower_is_better") != "higher_is_better"; }

Result<json> read_json(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(path + ": not a JSON object (truncated or corrupt)");
  return j;
}

}  // namespace fp::html
