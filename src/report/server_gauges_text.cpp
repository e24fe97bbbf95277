#include "report/server_gauges_text.h"

#include <algorithm>

#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

std::string role_words(const std::string& role) {
  if (role == "requests_processing") return "requests processing";
  if (role == "requests_deferred") return "requests deferred (queued)";
  if (role == "kv_cache_usage_ratio") return "KV cache usage";
  if (role == "prompt_tokens") return "prompt tokens";
  if (role == "predicted_tokens") return "output tokens";
  return role;
}

// The endpoint without its host and port ("/metrics"): the port is new in every launch, and result
// files diff cleanly (launch lines say {port} for the same reason).
std::string endpoint_path(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return path == std::string::npos ? url : url.substr(path);
}

}  // namespace

std::vector<std::string> server_gauges_lines(const ServerGauges& g, const std::string& phase) {
  std::vector<std::string> out;
  if (!g.measured()) {
    out.push_back(phase + ": the runtime's metrics not measured (" + std::to_string(g.scrapes) + " scrapes of " + endpoint_path(g.endpoint) +
                  (g.last_error.empty() ? "" : "; " + g.last_error) + ")");
    return out;
  }
  std::vector<std::string> peaks;
  for (const auto& [role, v] : g.peaks)
    peaks.push_back(role_words(role) + " " + (role == "kv_cache_usage_ratio" ? fixed(v * 100, 1) + "%" : fmt("%.0f", v)));
  std::string line = phase + ": the runtime's gauges at their peak (" + std::to_string(g.scrapes) + " scrapes of " + endpoint_path(g.endpoint) +
                     (g.failed_scrapes ? ", " + std::to_string(g.failed_scrapes) + " failed" : "") + "): " +
                     (peaks.empty() ? std::string("none") : join(peaks, ", "));
  std::vector<std::string> hidden;
  for (const auto& r : g.not_exposed) hidden.push_back(role_words(r));
  if (!hidden.empty()) line += "; not exposed by this build: " + join(hidden, ", ");
  out.push_back(line);
  auto grown = [&](const std::string& role) -> std::string {
    auto it = g.growth.find(role);
    return it == g.growth.end() ? std::string("not exposed") : fmt("%.0f", it->second);
  };
  out.push_back(phase + ": tokens, the runtime's counters against flashproof's own: prompt " + grown("prompt_tokens") +
                " (the runtime counts prompt tokens it did not take from its cache) against " +
                (g.own_known ? std::to_string(g.own_prompt_tokens) : std::string("unknown")) + ", output " + grown("predicted_tokens") +
                " against " + (g.own_known ? std::to_string(g.own_output_tokens) : std::string("unknown")));
  if (g.queued())
    out.push_back(phase + ": QUEUED: the runtime deferred requests (peak " + fmt("%.0f", g.peaks.at("requests_deferred")) +
                  "): these timings include waiting for a free slot, not only attention kernels");
  if (g.kv_cache_full())
    out.push_back(phase + ": KV CACHE FULL: the runtime's KV cache usage reached " + fixed(g.peaks.at("kv_cache_usage_ratio") * 100, 1) +
                  "%: these timings include evicting or waiting for cache, not only attention kernels");
  return out;
}

nlohmann::ordered_json server_gauges_json(const ServerGauges& g) {
  return {{"endpoint", g.endpoint}, {"scrapes", g.scrapes}, {"failed_scrapes", g.failed_scrapes}, {"last_error", g.last_error},
          {"peaks", g.peaks}, {"growth", g.growth}, {"not_exposed", g.not_exposed},
          {"own_prompt_tokens", g.own_prompt_tokens}, {"own_output_tokens", g.own_output_tokens}, {"own_known", g.own_known},
          {"queued", g.queued()}, {"kv_cache_full", g.kv_cache_full()}};
}

ServerGauges server_gauges_from_json(const nlohmann::json& j) {
  ServerGauges g;
  g.endpoint = j.value("endpoint", "");
  g.scrapes = j.value("scrapes", 0);
  g.failed_scrapes = j.value("failed_scrapes", 0);
  g.last_error = j.value("last_error", "");
  g.peaks = j.value("peaks", std::map<std::string, double>{});
  g.growth = j.value("growth", std::map<std::string, double>{});
  g.not_exposed = j.value("not_exposed", std::vector<std::string>{});
  g.own_prompt_tokens = j.value("own_prompt_tokens", 0LL);
  g.own_output_tokens = j.value("own_output_tokens", 0LL);
  g.own_known = j.value("own_known", false);
  return g;
}

void merge_server_gauges(ServerGauges& into, const ServerGauges& more) {
  into.scrapes += more.scrapes;
  into.failed_scrapes += more.failed_scrapes;
  if (!more.last_error.empty()) into.last_error = more.last_error;
  for (const auto& [role, v] : more.peaks) into.peaks[role] = into.peaks.count(role) ? std::max(into.peaks[role], v) : v;
  for (const auto& [role, v] : more.growth) into.growth[role] += v;
  for (const auto& r : more.not_exposed)
    if (std::find(into.not_exposed.begin(), into.not_exposed.end(), r) == into.not_exposed.end()) into.not_exposed.push_back(r);
  into.own_prompt_tokens += more.own_prompt_tokens;
  into.own_output_tokens += more.own_output_tokens;
  into.own_known = into.own_known && more.own_known;
}

}  // namespace fp
