#include "support/attention_shape.h"

#include <cmath>
#include <filesystem>

#include "util/json_fields.h"
#include "util/shipped_data.h"
#include "util/split_list.h"
#include "util/text.h"

namespace fp {
namespace {

double shape_default_scale(int head_k) { return head_k > 0 ? 1.0 / std::sqrt(static_cast<double>(head_k)) : 0; }

Result<AttentionShape> parse_public_shape(const nlohmann::json& entry, const std::string& path, size_t index) {
  const std::string where = "configs[" + std::to_string(index) + "]";
  if (!entry.is_object()) return make_error(path + ": field \"" + where + "\": expected an object");
  JsonFields f(entry, path, where);
  FP_TRY_STATUS(f.only_keys({"name", "config", "architecture", "layers", "n_embd", "n_head", "n_head_kv", "head_k", "head_v",
                             "n_ff", "trained_context", "kv_cache", "scale", "logit_softcap", "comment"}));
  AttentionShape s;
  FP_TRY(s.name, f.string("name"));
  if (s.name.empty() || s.name.find_first_of(", \t") != std::string::npos)
    return f.error("name", quote(s.name) + " is empty or holds a comma or a blank (names are picked by --public A,B)");
  FP_TRY(std::string config, f.string("config"));
  if (config.empty()) return f.error("config", "empty; name the public config this entry copies");
  s.source = path + ": " + config;
  FP_TRY(s.architecture, f.string("architecture"));
  FP_TRY(long long layers, f.integer("layers", 1, 100000));
  FP_TRY(long long n_embd, f.integer("n_embd", 1, 1 << 20));
  FP_TRY(long long n_head, f.integer("n_head", 1, 1 << 16));
  FP_TRY(long long n_head_kv, f.integer("n_head_kv", 1, 1 << 16));
  FP_TRY(long long head_k, f.integer("head_k", 1, 1 << 16));
  FP_TRY(long long head_v, f.integer("head_v", 1, 1 << 16));
  FP_TRY(long long n_ff, f.integer("n_ff", 1, 1 << 24));
  FP_TRY(long long ctx, f.integer("trained_context", 1, 1 << 30));
  s.layers = static_cast<int>(layers);
  s.n_embd = static_cast<int>(n_embd);
  s.n_head = static_cast<int>(n_head);
  s.n_head_kv = static_cast<int>(n_head_kv);
  s.head_k = static_cast<int>(head_k);
  s.head_v = static_cast<int>(head_v);
  s.n_ff = static_cast<int>(n_ff);
  s.trained_context = static_cast<int>(ctx);
  FP_TRY(std::string cache, f.one_of("kv_cache", {"k_and_v", "k_only"}));
  s.v_is_k_view = cache == "k_only";
  FP_TRY(s.scale, f.number_or("scale", 1e-6, 1e6, shape_default_scale(s.head_k)));
  FP_TRY(s.logit_softcap, f.number_or("logit_softcap", 0, 1e6, 0));
  if (auto st = check_shape(s); !st) return st.error();
  return s;
}

}  // namespace

std::string AttentionShape::head_label() const {
  return std::to_string(head_k) + "/" + std::to_string(head_v) + (v_is_k_view ? " (MLA)" : "");
}

std::string AttentionShape::heads_label() const { return std::to_string(n_head) + "/" + std::to_string(n_head_kv); }

Status check_shape(const AttentionShape& s) {
  const std::string who = quote(s.name) + " (" + s.source + ")";
  if (s.n_head < 1 || s.n_head_kv < 1 || s.head_k < 1 || s.head_v < 1)
    return make_error(who + ": heads, KV heads and head sizes must be 1 or more (got " + s.heads_label() + " heads, " +
                      s.head_label() + " head sizes)");
  if (s.n_head % s.n_head_kv != 0)
    return make_error(who + ": " + std::to_string(s.n_head) + " heads are not a multiple of " + std::to_string(s.n_head_kv) +
                      " KV heads: no grouped-query attention can share them");
  if (s.v_is_k_view && s.head_v > s.head_k)
    return make_error(who + ": a K-only cache (MLA) needs the V head size " + std::to_string(s.head_v) +
                      " no larger than the K head size " + std::to_string(s.head_k));
  return ok_status();
}

Result<std::vector<AttentionShape>> parse_public_shapes(const std::string& text, const std::string& path) {
  FP_TRY(nlohmann::json j, parse_json_object(text, path));
  JsonFields top(j, path);
  FP_TRY_STATUS(top.only_keys({"configs", "comment"}));
  if (!top.has("configs") || !j["configs"].is_array() || j["configs"].empty())
    return top.error("configs", "expected a non-empty array of public configs");
  std::vector<AttentionShape> out;
  for (size_t i = 0; i < j["configs"].size(); ++i) {
    FP_TRY(AttentionShape s, parse_public_shape(j["configs"][i], path, i));
    for (const auto& o : out)
      if (o.name == s.name) return make_error(path + ": configs[" + std::to_string(i) + "]: name " + quote(s.name) + " given twice");
    out.push_back(s);
  }
  return out;
}

Result<std::vector<AttentionShape>> load_public_shapes(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  return parse_public_shapes(text, path);
}

std::string shipped_public_shapes_path() { return shipped_data_dir() + "/models/public/configs.json"; }

Result<std::vector<AttentionShape>> select_shapes(const std::vector<AttentionShape>& all, const std::string& names,
                                                  const std::string& path) {
  std::vector<AttentionShape> out;
  for (const std::string& name : split_list(names, ',', ListItems::NonEmptyUnique)) {
    bool found = false;
    for (const auto& s : all)
      if (s.name == name) {
        out.push_back(s);
        found = true;
      }
    if (!found) {
      std::vector<std::string> valid;
      for (const auto& s : all) valid.push_back(s.name);
      return make_error("--public: no config named " + quote(name) + " in " + path + "; valid: " + join(valid, ", "));
    }
  }
  if (out.empty()) return make_error("--public " + quote(names) + ": no name given");
  return out;
}

AttentionShape shape_of_recipe(const ModelRecipe& r) {
  AttentionShape s;
  s.name = r.name;
  s.source = "recipe " + r.file;
  s.architecture = "llama";
  s.layers = static_cast<int>(r.n_layer);
  s.n_embd = static_cast<int>(r.n_embd);
  s.n_ff = static_cast<int>(r.n_ff);
  s.trained_context = static_cast<int>(r.n_ctx_train);
  s.n_head = static_cast<int>(r.n_head);
  s.n_head_kv = static_cast<int>(r.n_head_kv);
  s.head_k = s.head_v = static_cast<int>(r.head_size());
  s.scale = shape_default_scale(s.head_k);
  return s;
}

Result<AttentionShape> shape_of_gguf(const GgufMetadata& meta) {
  FP_TRY(ModelFacts f, model_facts(meta));
  AttentionShape s;
  s.name = std::filesystem::path(meta.source).filename().string();
  s.source = "GGUF header of " + meta.source;
  s.architecture = f.architecture;
  s.layers = f.layers;
  s.n_embd = f.n_embd;
  s.trained_context = f.trained_context;
  s.n_head = f.n_head;
  s.n_head_kv = f.n_head_kv;
  s.head_k = f.head_size_k;
  s.head_v = f.head_size_v;
  const std::string a = f.architecture + ".";
  if (auto ff = meta.integer(a + "feed_forward_length")) s.n_ff = static_cast<int>(*ff);
  // MLA as llama.cpp builds it with the weights absorbed (src/models/deepseek2.cpp): one KV head
  // holding the compressed latent and the rotary part; V is the latent, a view of K.
  if (auto rank = meta.integer(a + "attention.kv_lora_rank"); rank && *rank > 0) {
    const auto rope = meta.integer(a + "rope.dimension_count");
    if (!rope || *rope <= 0)
      return make_error(meta.source + ": GGUF key \"" + a + "attention.kv_lora_rank\" says MLA but \"" + a +
                        "rope.dimension_count\" is missing: the K head size (latent + rotary part) is unknown");
    s.head_k = static_cast<int>(*rank + *rope);
    s.head_v = static_cast<int>(*rank);
    s.n_head_kv = 1;
    s.v_is_k_view = true;
  }
  s.scale = shape_default_scale(s.head_k);
  if (auto it = meta.values.find(a + "attention.scale"); it != meta.values.end() && it->second.number && *it->second.number > 0)
    s.scale = *it->second.number;
  if (auto it = meta.values.find(a + "attn_logit_softcapping"); it != meta.values.end() && it->second.number)
    s.logit_softcap = *it->second.number;
  if (auto st = check_shape(s); !st) return st.error();
  return s;
}

}  // namespace fp
