#include "report/headroom_text.h"

#include <cmath>

#include "util/text.h"

namespace fp {
namespace {

std::string bytes_mib(uint64_t bytes) { return mib_text(static_cast<double>(bytes) / (1024.0 * 1024.0)); }

}  // namespace

std::vector<std::pair<std::string, std::string>> headroom_lines(const std::optional<Headroom>& h, const std::string& why_not) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!h) {
    out.push_back({"headroom", "not computed: " + why_not});
    return out;
  }
  out.push_back({"headroom.kv_bytes_per_token", std::to_string(h->bytes_per_token) + " (" + h->shape_text + ")"});
  out.push_back({"headroom.kv_cache_mib", mib_text(h->kv_mib) + " for " + std::to_string(h->cells) + " cells (" + h->cells_source +
                                              "): " + h->kv_check});
  if (h->compute_mib) out.push_back({"headroom.compute_buffer_mib", mib_text(*h->compute_mib)});
  for (const FreeOn& f : h->free) out.push_back({"headroom.memory_left_mib." + f.device, bytes_mib(f.free_bytes) + " (" + f.source + ")"});
  if (h->more_tokens >= 0) {
    out.push_back({"headroom.more_tokens", std::to_string(h->more_tokens) + " (tokens of KV cache the memory left on " + h->limited_by +
                                               " holds at " + std::to_string(h->bytes_per_token) + " bytes each)"});
    out.push_back({"headroom.context_fit_tokens", std::to_string(h->context_fit) + " (" + std::to_string(h->cells) + " now + " +
                                                      std::to_string(h->more_tokens) + "; the compute buffer's growth with the context is not counted)"});
  } else {
    out.push_back({"headroom.context_fit_tokens", "not measured: no free memory was read where the cache lives"});
  }
  for (size_t i = 0; i < h->notes.size(); ++i) out.push_back({"headroom.note." + std::to_string(i + 1), h->notes[i]});
  return out;
}

nlohmann::ordered_json headroom_json(const std::optional<Headroom>& h, const std::string& why_not) {
  using json = nlohmann::ordered_json;
  if (!h) return json{{"not_computed", why_not}};
  json free = json::array();
  for (const FreeOn& f : h->free) free.push_back({{"device", f.device}, {"free_bytes", f.free_bytes}, {"source", f.source}});
  json j{{"kv_bytes_per_token", h->bytes_per_token}, {"shape", h->shape_text}, {"cells", h->cells}, {"cells_source", h->cells_source},
         {"kv_cache_mib", h->kv_mib}, {"kv_check", h->kv_check}, {"kv_agrees", h->kv_agrees},
         {"compute_buffer_mib", h->compute_mib ? json(*h->compute_mib) : json(nullptr)}, {"memory_left", free},
         {"more_tokens", h->more_tokens >= 0 ? json(h->more_tokens) : json(nullptr)},
         {"context_fit_tokens", h->context_fit >= 0 ? json(h->context_fit) : json(nullptr)},
         {"limited_by", h->limited_by}, {"notes", h->notes}};
  return j;
}

std::optional<Headroom> headroom_from_json(const nlohmann::json& j, std::string* why_not) {
  if (!j.is_object()) {
    *why_not = "not recorded (the result predates headroom)";
    return std::nullopt;
  }
  if (j.contains("not_computed")) {
    *why_not = j["not_computed"].is_string() ? j["not_computed"].get<std::string>() : "not computed";
    return std::nullopt;
  }
  try {
    Headroom h;
    h.bytes_per_token = j.at("kv_bytes_per_token").get<uint64_t>();
    h.shape_text = j.at("shape").get<std::string>();
    h.cells = j.at("cells").get<long>();
    h.cells_source = j.at("cells_source").get<std::string>();
    h.kv_mib = j.at("kv_cache_mib").get<double>();
    h.kv_check = j.at("kv_check").get<std::string>();
    h.kv_agrees = j.at("kv_agrees").get<bool>();
    if (j.at("compute_buffer_mib").is_number()) h.compute_mib = j["compute_buffer_mib"].get<double>();
    for (const auto& f : j.at("memory_left"))
      h.free.push_back({f.at("device").get<std::string>(), f.at("free_bytes").get<uint64_t>(), f.at("source").get<std::string>()});
    h.more_tokens = j.at("more_tokens").is_number() ? j["more_tokens"].get<long>() : -1;
    h.context_fit = j.at("context_fit_tokens").is_number() ? j["context_fit_tokens"].get<long>() : -1;
    h.limited_by = j.at("limited_by").get<std::string>();
    h.notes = j.at("notes").get<std::vector<std::string>>();
    return h;
  } catch (const nlohmann::json::exception& e) {
    *why_not = std::string("unreadable in the result file: ") + e.what();
    return std::nullopt;
  }
}

std::vector<std::string> flag_memory_change(const std::optional<Headroom>& off, const std::optional<Headroom>& on) {
  std::vector<std::string> out;
  if (!off || !on) return out;
  if (off->compute_mib && on->compute_mib) {
    const double d = *on->compute_mib - *off->compute_mib;
    std::string line = "the flag on changes the compute buffer by " + std::string(d >= 0 ? "+" : "") + mib_text(d) + " MiB (" +
                       mib_text(*off->compute_mib) + " -> " + mib_text(*on->compute_mib) + ")";
    if (std::fabs(d) >= 0.001 && on->bytes_per_token > 0)
      line += ": " + std::to_string(tokens_in_mib(std::fabs(d), on->bytes_per_token)) + " tokens of KV cache at " +
              std::to_string(on->bytes_per_token) + " bytes each " + (d < 0 ? "freed" : "taken");
    out.push_back(line);
  }
  if (std::fabs(on->kv_mib - off->kv_mib) < 0.001)
    out.push_back("KV cache unchanged: " + mib_text(on->kv_mib) + " MiB (" + std::to_string(on->bytes_per_token) + " bytes per token)");
  else
    out.push_back("KV cache " + mib_text(off->kv_mib) + " -> " + mib_text(on->kv_mib) + " MiB (" + std::to_string(off->bytes_per_token) +
                  " -> " + std::to_string(on->bytes_per_token) + " bytes per token)");
  if (off->context_fit >= 0 && on->context_fit >= 0)
    out.push_back("context that fits: flag off " + std::to_string(off->context_fit) + " tokens, flag on " + std::to_string(on->context_fit) +
                  " (each from its own launch's memory left: other processes move it too)");
  return out;
}

}  // namespace fp
