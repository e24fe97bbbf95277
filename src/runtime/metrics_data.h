// Where a runtime exposes its own gauges (llama-server --metrics: Prometheus text at /metrics), read
// from the "metrics" part of src/runtime/data/<runtime>.json: the endpoint, the launch arguments
// that turn it on, and which metric answers which question. Another runtime's gauges are one entry.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace fp {

// The questions flashproof asks a runtime's metrics, by role.
//   gauges (the peak over a phase): requests_processing, requests_deferred, kv_cache_usage_ratio
//   counters (the growth over a phase): prompt_tokens, predicted_tokens
const std::vector<std::string>& metric_roles();
bool metric_role_is_counter(const std::string& role);

struct MetricsData {
  bool present = false;                      // the runtime data has a "metrics" part
  std::string path;                          // "/metrics"
  std::vector<std::string> launch_args;      // added to the timed launch: {"--metrics"}
  std::map<std::string, std::string> names;  // role -> metric name
};

// Parses the "metrics" part (where names it in errors: "file: metrics"). Its "example" (a real
// scrape) must hold every named metric except the roles in "example_lacks" (a metric the recorded
// build does not expose).
Result<MetricsData> parse_metrics_data(const nlohmann::json& obj, const std::string& where);
// The runtime's "metrics" part; not present when its data file has none.
Result<MetricsData> load_metrics_data(const std::string& runtime);

}  // namespace fp
