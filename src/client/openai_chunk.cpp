#include "client/openai_chunk.h"

#include "util/text.h"
#include "util/utf8.h"

namespace fp {
namespace {

using nlohmann::json;

// Non-empty content of choice 0, or "" (null, absent, empty, role-only).
std::string content_of(const json& choice) {
  const json* c = nullptr;
  if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
    if (auto it = d->find("content"); it != d->end()) c = &*it;
  }
  if (!c) {
    if (auto it = choice.find("text"); it != choice.end()) c = &*it;
  }
  return c && c->is_string() ? c->get<std::string>() : std::string();
}

int int_field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int>() : -1;
}

}  // namespace

std::string error_message_from_body(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    auto e = j.find("error");
    if (e != j.end() && e->is_object() && e->contains("message") && (*e)["message"].is_string()) {
      return quote((*e)["message"].get<std::string>());
    }
    if (e != j.end() && e->is_string()) return quote(e->get<std::string>());
    if (j.contains("message") && j["message"].is_string()) return quote(j["message"].get<std::string>());
  }
  return quote(body);
}

std::string http_error_text(long status, std::string_view body) {
  constexpr size_t kShown = 300;
  const std::string text_body = valid_utf8_noted(body, kHttpBodies);
  std::string one_line;
  for (char c : std::string_view(text_body).substr(0, utf8_cut(text_body, kShown))) one_line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  one_line = trim(one_line);
  if (body.size() > kShown) one_line += "... (" + std::to_string(body.size()) + " bytes)";
  std::string text = "HTTP " + std::to_string(status) + ": " + error_message_from_body(body);
  if (body.empty()) return "HTTP " + std::to_string(status) + " with an empty body";
  return text + "; body: " + one_line;
}

namespace {

ServerTimings read_timings(const json& t, const ServerTimingKeys& keys) {
  auto num = [&](const std::string& k) {
    auto it = k.empty() ? t.end() : t.find(k);
    return it != t.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
  };
  ServerTimings out;
  out.reported = true;
  out.prompt_ms = num(keys.prompt_ms);
  out.prompt_per_second = num(keys.prompt_per_second);
  out.decode_per_second = num(keys.decode_per_second);
  out.prompt_tokens = num(keys.prompt_tokens);
  out.cached_tokens = num(keys.cached_tokens);
  out.decode_ms = num(keys.decode_ms);
  out.decode_tokens = num(keys.decode_tokens);
  return out;
}

}  // namespace

Status apply_stream_chunk(std::string_view data, double arrival_s, StreamResult& r, const ServerTimingKeys& keys) {
  if (r.done) return ok_status();
  if (trim(data) == "[DONE]") {
    r.done = true;
    r.e2e_s = arrival_s;
    return ok_status();
  }
  json j = json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return make_error("invalid JSON in stream event " + quote(data) + "; expected a JSON object or [DONE]");
  }
  if (j.contains("error")) return make_error("server sent an error event: " + error_message_from_body(data));

  if (auto sf = j.find("system_fingerprint"); sf != j.end() && sf->is_string()) {
    r.system_fingerprint = sf->get<std::string>();
  }
  if (auto ch = j.find("choices"); ch != j.end() && ch->is_array() && !ch->empty()) {
    const json& choice = (*ch)[0];
    std::string content = content_of(choice);
    if (!content.empty()) {
      if (r.ttft_s < 0) {
        r.ttft_s = arrival_s;
        if (auto t = keys.object.empty() ? j.end() : j.find(keys.object); t != j.end() && t->is_object())
          r.at_first_text = read_timings(*t, keys);
      }
      r.content_event_times_s.push_back(arrival_s);
      r.text += content;
    }
    if (auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string()) {
      r.finish_reason = fr->get<std::string>();
    }
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    r.prompt_tokens = int_field(*u, "prompt_tokens");
    r.completion_tokens = int_field(*u, "completion_tokens");
  }
  if (keys.object.empty()) return ok_status();
  if (auto t = j.find(keys.object); t != j.end() && t->is_object()) r.server = read_timings(*t, keys);
  return ok_status();
}

}  // namespace fp
