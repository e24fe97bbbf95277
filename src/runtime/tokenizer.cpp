#include "runtime/tokenizer.h"

#include <cmath>

#include "client/http_client.h"
#include "client/openai_chunk.h"
#include "util/text.h"
#include "util/utf8.h"

namespace fp {
namespace {

nlohmann::json messages_json(const Prompt& p) {
  nlohmann::json m = nlohmann::json::array();
  for (const auto& msg : p.messages) m.push_back({{"role", msg.role}, {"content", msg.content}});
  return m;
}

// The start of a body for an error message, as text (util/utf8.h).
std::string body_head(const std::string& body) {
  const std::string text = valid_utf8_noted(body, kHttpBodies);
  return text.substr(0, utf8_cut(text, 300));
}

Result<nlohmann::json> post_json(const std::string& url, const nlohmann::json& body, double timeout_s,
                                 const std::vector<std::string>& headers) {
  FP_TRY(HttpResponse r, http_post_json(url, body.dump(), timeout_s, kDefaultMaxBodyBytes, headers));
  if (r.status < 200 || r.status > 299)
    return make_error("POST " + url + ": HTTP " + std::to_string(r.status) + ": " + body_head(r.body));
  auto j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error("POST " + url + ": the answer is not a JSON object: " + body_head(r.body));
  return j;
}

}  // namespace

nlohmann::json tokenize_text_body(const TokenizerEndpoint& e, const std::string& text) {
  nlohmann::json body = e.text_extra;
  body[e.text_field] = text;
  return body;
}

nlohmann::json tokenize_chat_body(const TokenizerEndpoint& e, const Prompt& p) {
  nlohmann::json body = e.chat_extra;
  body[e.chat_messages_field] = messages_json(p);
  return body;
}

Result<int> count_in_answer(const TokenizerEndpoint& e, const nlohmann::json& j, const std::string& url) {
  const std::string where = "POST " + url + ": ";
  if (!j.is_object() || !j.contains(e.count_field))
    return make_error(where + "the answer has no field " + quote(e.count_field) + " (runtime data tokenizer.count): " + j.dump().substr(0, 300));
  const auto& c = j[e.count_field];
  if (c.is_array()) return static_cast<int>(c.size());
  if (c.is_number_integer() && c.get<long long>() >= 0) return static_cast<int>(c.get<long long>());
  return make_error(where + "field " + quote(e.count_field) + " is neither a list of tokens nor a count: " + c.dump().substr(0, 100));
}

Result<int> count_prompt_tokens(const TokenizerEndpoint& e, const std::string& base_url, const Prompt& p, bool chat,
                                double timeout_s, const std::vector<std::string>& headers) {
  nlohmann::json body;
  if (!chat) {
    body = tokenize_text_body(e, p.as_text());
  } else if (!e.chat_messages_field.empty()) {
    body = tokenize_chat_body(e, p);
  } else {
    const std::string url = base_url + e.template_path;
    FP_TRY(nlohmann::json rendered, post_json(url, {{e.template_messages_field, messages_json(p)}}, timeout_s, headers));
    if (!rendered.contains(e.template_text_field) || !rendered[e.template_text_field].is_string())
      return make_error("POST " + url + ": the answer has no text field " + quote(e.template_text_field) + " (runtime data tokenizer.chat.text_field)");
    body = tokenize_text_body(e, rendered[e.template_text_field].get<std::string>());
  }
  const std::string url = base_url + e.path;
  FP_TRY(nlohmann::json answer, post_json(url, body, timeout_s, headers));
  return count_in_answer(e, answer, url);
}

int estimate_prompt_tokens(const Prompt& p) {
  size_t chars = 0;
  for (const auto& m : p.messages) chars += m.content.size();
  return static_cast<int>(std::ceil(static_cast<double>(chars) / kCharsPerTokenEstimate));
}

std::string token_count_method(const Adapter& a, bool chat) {
  if (!a.tokenizer) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "estimated at %g characters per token: the runtime data of %s names no tokenizer endpoint",
                  kCharsPerTokenEstimate, a.name.c_str());
    return buf;
  }
  std::string s = a.name + " POST " + a.tokenizer->path;
  if (chat && a.tokenizer->chat_messages_field.empty()) s += " (chat turns rendered by POST " + a.tokenizer->template_path + ")";
  else if (chat) s += " (chat turns through the chat template)";
  return s;
}

}  // namespace fp
