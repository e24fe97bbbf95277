#include "runtime/metrics_data.h"

#include <algorithm>

#include "measure/prometheus_text.h"
#include "runtime/runtime_data.h"
#include "util/json_fields.h"
#include "util/text.h"

namespace fp {

const std::vector<std::string>& metric_roles() {
  static const std::vector<std::string> roles = {"requests_processing", "requests_deferred", "kv_cache_usage_ratio",
                                                 "prompt_tokens", "predicted_tokens"};
  return roles;
}

bool metric_role_is_counter(const std::string& role) { return role == "prompt_tokens" || role == "predicted_tokens"; }

Result<MetricsData> parse_metrics_data(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return error_at(where, "value is not an object");
  FP_TRY_STATUS(only_keys(j, where, KeyWording::KeyList, {"comment", "path", "launch_args", "names", "example", "example_lacks"}));
  MetricsData d;
  d.present = true;
  if (!j.contains("path") || !j["path"].is_string() || j["path"].get<std::string>().empty() || j["path"].get<std::string>()[0] != '/')
    return error_at(where + ".path", "missing or not an endpoint path such as \"/metrics\"");
  d.path = j["path"].get<std::string>();
  if (j.contains("launch_args")) {
    if (!j["launch_args"].is_array()) return error_at(where + ".launch_args", "value is not a list of arguments");
    for (const auto& a : j["launch_args"]) {
      if (!a.is_string()) return error_at(where + ".launch_args", "value " + quote(a.dump()) + " is not a string");
      d.launch_args.push_back(a.get<std::string>());
    }
  }
  if (!j.contains("names") || !j["names"].is_object() || j["names"].empty())
    return error_at(where + ".names", "missing: an object of role -> metric name; roles: " + join(metric_roles(), ", "));
  for (const auto& [role, name] : j["names"].items()) {
    const auto& roles = metric_roles();
    if (std::find(roles.begin(), roles.end(), role) == roles.end())
      return error_at(where + ".names." + role, "unknown role; valid: " + join(roles, ", "));
    if (!name.is_string() || name.get<std::string>().empty())
      return error_at(where + ".names." + role, "value " + quote(name.dump()) + " is not a metric name");
    d.names[role] = name.get<std::string>();
  }
  std::vector<std::string> lacks;
  if (j.contains("example_lacks")) {
    if (!j["example_lacks"].is_array()) return error_at(where + ".example_lacks", "value is not a list of roles");
    for (const auto& r : j["example_lacks"]) {
      if (!r.is_string() || !d.names.count(r.get<std::string>()))
        return error_at(where + ".example_lacks", "value " + quote(r.dump()) + " is not a role named in \"names\"");
      lacks.push_back(r.get<std::string>());
    }
  }
  if (!j.contains("example") || !j["example"].is_string())
    return error_at(where + ".example", "missing: a real scrape of the endpoint (Prometheus text), where it was seen in the comment");
  FP_TRY(PromText example, parse_prometheus_text(j["example"].get<std::string>(), where + ".example"));
  for (const auto& [role, name] : d.names) {
    const bool lacked = std::find(lacks.begin(), lacks.end(), role) != lacks.end();
    if (example.value(name).has_value() == lacked)
      return error_at(where + ".names." + role, quote(name) + (lacked ? " is in the example, but example_lacks names it"
                                                                         : " is not in the example; a role the recorded build does not expose goes in example_lacks"));
  }
  return d;
}

Result<MetricsData> load_metrics_data(const std::string& runtime) {
  FP_TRY(RuntimeDataFile f, read_runtime_data(runtime));
  FP_TRY(nlohmann::json j, parse_json_object(f.text, f.path));
  if (!j.contains("metrics")) return MetricsData{};
  return parse_metrics_data(j["metrics"], f.path + ": metrics");
}

}  // namespace fp
