#include "runtime/token_probabilities.h"

#include "util/text.h"

namespace fp {
namespace {

using json = nlohmann::json;

Result<TokenProbabilityEndpoint> load_endpoint(const JsonFields& tp, const std::string& key) {
  FP_TRY(JsonFields e, tp.object(key));
  FP_TRY_STATUS(e.only_keys({"request", "text", "tokens", "comment"}));
  TokenProbabilityEndpoint out;
  FP_TRY(JsonFields request, e.object("request"));
  out.request = request.raw();
  if (out.request.empty())
    return e.error("request", "empty; expected the fields that ask for token probabilities, e.g. {\"logprobs\": true}");
  FP_TRY(out.text, e.string("text"));
  FP_TRY(out.tokens, e.string("tokens"));
  for (const auto& [key, p] : {std::pair<const char*, const std::string*>{"text", &out.text}, {"tokens", &out.tokens}}) {
    bool valid = !p->empty();
    try {
      (void)json::json_pointer(*p);
    } catch (const json::exception&) {
      valid = false;
    }
    if (!valid) return e.error(key, quote(*p) + " is not a JSON pointer; expected e.g. \"/choices/0/logprobs/content\"");
  }
  return out;
}

Result<TokenCandidate> read_candidate(const json& t, const TokenProbabilityKeys& keys, const std::string& where) {
  if (!t.is_object()) return make_error(where + ": " + t.dump() + " is not an object; expected a token with " + quote(keys.logprob));
  TokenCandidate c;
  auto lp = t.find(keys.logprob);
  if (lp == t.end() || !lp->is_number())
    return make_error(where + "." + keys.logprob + ": " + (lp == t.end() ? std::string("missing") : lp->dump()) +
                      "; expected a number, the token's natural log-probability");
  c.logprob = lp->get<double>();
  auto text = t.find(keys.text);
  if (text == t.end() || !text->is_string())
    return make_error(where + "." + keys.text + ": " + (text == t.end() ? std::string("missing") : text->dump()) +
                      "; expected the token's text");
  c.text = text->get<std::string>();
  if (!keys.id.empty()) {
    auto id = t.find(keys.id);
    if (id != t.end() && id->is_number_integer()) c.id = id->get<long long>();
  }
  return c;
}

}  // namespace

Result<TokenProbabilityKeys> load_token_probability_keys(const JsonFields& adapter) {
  FP_TRY(JsonFields tp, adapter.object("token_probabilities"));
  FP_TRY_STATUS(tp.only_keys({"chat", "completion", "token", "comment"}));
  TokenProbabilityKeys k;
  FP_TRY(k.chat, load_endpoint(tp, "chat"));
  FP_TRY(k.completion, load_endpoint(tp, "completion"));
  FP_TRY(JsonFields t, tp.object("token"));
  FP_TRY_STATUS(t.only_keys({"id", "text", "logprob", "candidates"}));
  FP_TRY(k.id, t.string_or("id", ""));
  FP_TRY(k.text, t.string("text"));
  FP_TRY(k.logprob, t.string("logprob"));
  FP_TRY(k.candidates, t.string("candidates"));
  return k;
}

Result<AnswerWithProbabilities> read_token_probabilities(const std::string& body, const TokenProbabilityEndpoint& endpoint,
                                                         const TokenProbabilityKeys& keys, const std::string& where) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return make_error(where + ": the response is not JSON: " + quote(body.substr(0, 200)));
  AnswerWithProbabilities out;
  const json::json_pointer text_at(endpoint.text), tokens_at(endpoint.tokens);
  if (!j.contains(text_at) || !j.at(text_at).is_string())
    return make_error(where + ": the response has no answer text at " + endpoint.text +
                      " (the runtime data's token_probabilities): " + quote(body.substr(0, 200)));
  out.text = j.at(text_at).get<std::string>();
  if (!j.contains(tokens_at) || j.at(tokens_at).is_null()) return out;  // none returned
  const json& tokens = j.at(tokens_at);
  if (!tokens.is_array())
    return make_error(where + ": " + endpoint.tokens + " is " + tokens.dump().substr(0, 80) + "; expected an array of tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string at = where + ": " + endpoint.tokens + "/" + std::to_string(i);
    AnsweredToken t;
    FP_TRY(t.chosen, read_candidate(tokens[i], keys, at));
    if (auto c = tokens[i].find(keys.candidates); c != tokens[i].end() && c->is_array()) {
      for (size_t n = 0; n < c->size(); ++n) {
        FP_TRY(TokenCandidate cand, read_candidate((*c)[n], keys, at + "." + keys.candidates + "/" + std::to_string(n)));
        t.candidates.push_back(std::move(cand));
      }
    }
    out.tokens.push_back(std::move(t));
  }
  return out;
}

}  // namespace fp
