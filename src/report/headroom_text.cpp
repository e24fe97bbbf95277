#include "report/headroom_text.h"

#include <algorithm>
#include <cmath>

#include "util/text.h"

namespace fp {
namespace {

std::string bytes_mib(uint64_t bytes) { return mib_text(static_cast<double>(bytes) / (1024.0 * 1024.0)); }

const char* state_name(NeighbourState s) {
  switch (s) {
    case NeighbourState::Running: return "running";
    case NeighbourState::NotRunning: return "not running";
    case NeighbourState::Elsewhere: return "elsewhere";
  }
  return "?";
}

std::optional<NeighbourState> state_of(const std::string& s) {
  for (NeighbourState st : {NeighbourState::Running, NeighbourState::NotRunning, NeighbourState::Elsewhere})
    if (s == state_name(st)) return st;
  return std::nullopt;
}

std::string process_words(const OtherProcess& p, bool with_neighbour = true) {
  return "pid " + std::to_string(p.pid) + " " + (p.command.empty() ? "(not visible here: another pid namespace, or the runtime itself?)" : p.command) +
         ", " + (p.mib ? mib_text(*p.mib) + " MiB" : "memory not known") + (p.neighbour.empty() || !with_neighbour ? "" : " (neighbour " + p.neighbour + ")");
}

std::string others_line(const OthersOn& on) {
  if (!on.listed) return "not listed: " + on.why_not + (on.processes.empty() ? "" : " (" + std::to_string(on.processes.size()) + " matching a neighbour)");
  if (on.processes.empty()) return "none: the runtime is alone on " + on.where;
  std::vector<std::string> ps;
  for (const auto& p : on.processes) ps.push_back(process_words(p));
  return std::to_string(on.processes.size()) + " process" + (on.processes.size() > 1 ? "es" : "") + " on " + on.where + ": " + join(ps, "; ");
}

std::string neighbour_line(const NeighbourOutcome& n) {
  const std::string declared = mib_text(n.declared.mib) + " MiB";
  switch (n.state) {
    case NeighbourState::Running: {
      std::vector<std::string> ps;
      for (const auto& p : n.processes) ps.push_back(process_words(p, false));
      std::string s = "running on " + n.declared.device + " (" + join(ps, "; ") + "; " + n.looked + "): already out of the memory left";
      if (!n.used_mib) return s + "; what it holds is not known, nothing more reserved (declared " + declared + ")";
      if (n.reserved_mib > 0) return s + "; " + mib_text(n.reserved_mib) + " MiB more reserved up to its declared " + declared;
      return s + " (declared " + declared + ")";
    }
    case NeighbourState::NotRunning:
      return "not running on " + n.declared.device + " (" + n.looked + "): its declared " + declared + " reserved from the memory left";
    case NeighbourState::Elsewhere:
      return "on " + n.declared.device + ", which holds none of this case's KV cache: not counted (declared " + declared + ")";
  }
  return "";
}

std::string shortfall(const DeployedFit& d) {
  const long shown = std::max(0L, d.fits);
  std::string s = "deployed context " + std::to_string(d.deployed) + " does not fit beside " + d.beside + ": " + std::to_string(shown) +
                  " tokens fit, short by " + std::to_string(d.short_by) + " tokens (" +
                  mib_text(static_cast<double>(d.short_by) * static_cast<double>(d.bytes_per_token) / (1024.0 * 1024.0)) +
                  " MiB of KV cache at " + std::to_string(d.bytes_per_token) + " bytes/token)";
  if (d.fits < 0) s += "; the reservations alone take more than the memory left and the runtime's present KV cache together";
  return s;
}

std::string deployed_line(const DeployedFit& d) {
  std::string s = std::to_string(d.deployed) + " (" + d.deployed_source + "): ";
  if (!d.checked) return s + "NOT CHECKED: " + d.not_checked;
  if (!d.fits_ok()) return s + "DOES NOT FIT: " + shortfall(d);
  return s + "fits beside " + d.beside + ": " + std::to_string(d.fits) + " tokens fit" +
         (d.reserved_mib > 0 ? " after " + mib_text(d.reserved_mib) + " MiB reserved" : std::string()) + ", " +
         std::to_string(d.fits - d.deployed) + " to spare (the first to run out: " + d.limited_by + ")";
}

nlohmann::ordered_json process_json(const OtherProcess& p) {
  using json = nlohmann::ordered_json;
  return json{{"pid", p.pid}, {"command", p.command}, {"mib", p.mib ? json(*p.mib) : json(nullptr)}, {"neighbour", p.neighbour}};
}

OtherProcess process_from_json(const nlohmann::json& j) {
  OtherProcess p;
  p.pid = j.at("pid").get<unsigned>();
  p.command = j.at("command").get<std::string>();
  if (j.at("mib").is_number()) p.mib = j["mib"].get<double>();
  p.neighbour = j.at("neighbour").get<std::string>();
  return p;
}

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
  for (const OthersOn& on : h->others) out.push_back({"headroom.others." + on.device, others_line(on)});
  for (const NeighbourOutcome& n : h->neighbours) out.push_back({"headroom.neighbour." + n.declared.name, neighbour_line(n)});
  if (h->deployed) out.push_back({"headroom.deployed_context", deployed_line(*h->deployed)});
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
  json others = json::array();
  for (const OthersOn& on : h->others) {
    json ps = json::array();
    for (const auto& p : on.processes) ps.push_back(process_json(p));
    others.push_back({{"device", on.device}, {"where", on.where}, {"listed", on.listed}, {"why_not", on.why_not}, {"processes", ps}});
  }
  j["others"] = others;
  json neighbours = json::array();
  for (const NeighbourOutcome& n : h->neighbours) {
    json ps = json::array();
    for (const auto& p : n.processes) ps.push_back(process_json(p));
    neighbours.push_back({{"name", n.declared.name}, {"match", n.declared.match}, {"device", n.declared.device}, {"mib", n.declared.mib},
                          {"state", state_name(n.state)}, {"processes", ps}, {"used_mib", n.used_mib ? json(*n.used_mib) : json(nullptr)},
                          {"reserved_mib", n.reserved_mib}, {"looked", n.looked}});
  }
  j["neighbours"] = neighbours;
  if (h->deployed) {
    const DeployedFit& d = *h->deployed;
    j["deployed"] = {{"deployed_context", d.deployed}, {"source", d.deployed_source}, {"checked", d.checked}, {"not_checked", d.not_checked},
                     {"fits_tokens", d.fits}, {"short_by_tokens", d.short_by}, {"bytes_per_token", d.bytes_per_token},
                     {"reserved_mib", d.reserved_mib}, {"limited_by", d.limited_by}, {"beside", d.beside}, {"fits", d.fits_ok()}};
  } else {
    j["deployed"] = nullptr;
  }
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
    // Beside the runtime: absent from results that predate several models on one card.
    for (const auto& o : j.value("others", nlohmann::json::array())) {
      OthersOn on{o.at("device").get<std::string>(), o.at("where").get<std::string>(), o.at("listed").get<bool>(),
                  o.at("why_not").get<std::string>(), {}};
      for (const auto& p : o.at("processes")) on.processes.push_back(process_from_json(p));
      h.others.push_back(std::move(on));
    }
    for (const auto& n : j.value("neighbours", nlohmann::json::array())) {
      NeighbourOutcome out;
      out.declared = {n.at("name").get<std::string>(), n.at("match").get<std::string>(), n.at("device").get<std::string>(), n.at("mib").get<double>()};
      const auto st = state_of(n.at("state").get<std::string>());
      if (!st) {
        *why_not = "unreadable in the result file: unknown neighbour state " + n.at("state").dump();
        return std::nullopt;
      }
      out.state = *st;
      for (const auto& p : n.at("processes")) out.processes.push_back(process_from_json(p));
      if (n.at("used_mib").is_number()) out.used_mib = n["used_mib"].get<double>();
      out.reserved_mib = n.at("reserved_mib").get<double>();
      out.looked = n.at("looked").get<std::string>();
      h.neighbours.push_back(std::move(out));
    }
    if (j.contains("deployed") && j["deployed"].is_object()) {
      const auto& d = j["deployed"];
      DeployedFit f;
      f.deployed = d.at("deployed_context").get<long>();
      f.deployed_source = d.at("source").get<std::string>();
      f.checked = d.at("checked").get<bool>();
      f.not_checked = d.at("not_checked").get<std::string>();
      f.fits = d.at("fits_tokens").get<long>();
      f.short_by = d.at("short_by_tokens").get<long>();
      f.bytes_per_token = d.at("bytes_per_token").get<uint64_t>();
      f.reserved_mib = d.at("reserved_mib").get<double>();
      f.limited_by = d.at("limited_by").get<std::string>();
      f.beside = d.at("beside").get<std::string>();
      h.deployed = f;
    }
    return h;
  } catch (const nlohmann::json::exception& e) {
    *why_not = std::string("unreadable in the result file: ") + e.what();
    return std::nullopt;
  }
}

std::optional<std::string> deployed_context_failure(const std::optional<Headroom>& h, const std::string& why_not) {
  if (!h) return "headroom.deployed_context not checked: the headroom was not computed (" + why_not + ")";
  if (!h->deployed) return "headroom.deployed_context not checked: no deployed context was assessed";
  const DeployedFit& d = *h->deployed;
  if (!d.checked) return "deployed context " + std::to_string(d.deployed) + " not checked: " + d.not_checked;
  if (!d.fits_ok()) return shortfall(d);
  return std::nullopt;
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
