#include "model/model_recipe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "model/gguf_writer.h"
#include "util/sha256.h"
#include "util/text.h"

namespace fp {
namespace {

using json = nlohmann::json;

Result<uint32_t> positive(const json& j, const std::string& file, const char* key, uint32_t max) {
  if (!j.contains(key)) return make_error(file + ": field \"" + key + "\" is missing; expected a whole number 1.." + std::to_string(max));
  const json& v = j[key];
  if (!v.is_number_unsigned() || v.get<uint64_t>() < 1 || v.get<uint64_t>() > max)
    return make_error(file + ": field \"" + key + "\" = " + v.dump() + ": expected a whole number 1.." + std::to_string(max));
  return static_cast<uint32_t>(v.get<uint64_t>());
}

// A splitmix64 stream per tensor, so a tensor's values depend only on the seed and its name.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform(float scale) {  // in [-scale, scale)
    double u = static_cast<double>(next() >> 11) / 9007199254740992.0;
    return static_cast<float>((2.0 * u - 1.0) * scale);
  }
};

uint64_t name_hash(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string f16_tensor(uint64_t seed, const std::string& name, uint64_t count, float scale) {
  Rng rng{seed ^ name_hash(name)};
  std::string data(count * 2, '\0');
  for (uint64_t i = 0; i < count; ++i) {
    uint16_t h = float_to_half(rng.uniform(scale));
    data[2 * i] = static_cast<char>(h & 0xff);
    data[2 * i + 1] = static_cast<char>(h >> 8);
  }
  return data;
}

std::string f32_ones(uint64_t count) {
  std::string data(count * 4, '\0');
  float one = 1.0f;
  for (uint64_t i = 0; i < count; ++i) std::memcpy(&data[4 * i], &one, 4);
  return data;
}

// Word pieces after the control and byte tokens. Printable, unique; the model only ever emits
// these (their output rows are the only non-zero ones), so answers stay printable text.
const char* const kWords[] = {
    "the", "of", "and", "to", "in", "is", "it", "that", "for", "on", "with", "as", "was", "at", "by",
    "an", "be", "this", "from", "or", "have", "not", "are", "but", "had", "they", "you", "were",
    "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will",
    "would", "who", "so", "no", "out", "up", "into", "do", "any", "time", "about", "than", "only",
    "other", "new", "some", "could", "these", "two", "may", "first", "then", "after", "over",
    "where", "most", "well", "also", "through", "back", "much", "before", "good", "such", "year",
    "work", "day", "part", "place", "case", "point", "number", "group", "problem", "fact", "order",
    "model", "token", "cache", "kernel", "attention", "memory", "prompt", "answer", "value", "field",
    "name", "date", "total", "invoice", "customer", "amount", "code", "function", "return", "list",
    "string", "int", "void", "class", "struct", "if", "else", "while", "for", "test", "data", "file",
    "line", "page", "text", "word", "result", "error", "server", "client", "request", "run", "fast",
    "slow", "small", "large", "red", "blue", "green", "cat", "dog", "tree", "river", "stone", "light",
    "night", "city", "road", "house", "water", "fire", "earth", "wind", "north", "south", "east",
    "west", "open", "close", "read", "write", "send", "keep", "make", "take", "give", "find", "show",
    "tell", "ask", "seem", "feel", "try", "leave", "call", "hello", "world", "yes", "thanks", "please",
};

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  std::vector<bool> emittable;
};

Vocab make_vocab() {
  Vocab v;
  auto add = [&](std::string t, float score, int32_t type, bool emit) {
    v.tokens.push_back(std::move(t));
    v.scores.push_back(score);
    v.types.push_back(type);
    v.emittable.push_back(emit);
  };
  add("<unk>", 0, 2, false);
  add("<s>", 0, 3, false);
  add("</s>", 0, 3, false);
  char buf[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 0, 6, false);
  }
  const std::string space = "\xe2\x96\x81";  // SentencePiece's word boundary
  std::set<std::string> seen;
  for (const char* w : kWords) {
    std::string piece = space + w;
    if (!seen.insert(piece).second) continue;
    add(piece, -static_cast<float>(seen.size()), 1, true);
  }
  for (char c = 'a'; c <= 'z'; ++c) add(std::string(1, c), -1000.0f, 1, false);
  for (const char* p : {",", ".", ":", "?", "!", "\n", space.c_str()}) add(p, -1001.0f, 1, std::string(p) == "." || std::string(p) == ",");
  return v;
}

}  // namespace

Result<ModelRecipe> load_model_recipe(const std::string& path) {
  FP_TRY(std::string text, read_file(path));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return make_error(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return make_error(path + ": expected a JSON object");
  static const std::set<std::string> known = {"name", "seed", "n_embd", "n_head", "n_head_kv", "n_layer",
                                              "n_ff", "n_ctx_train", "output", "sha256", "comment"};
  for (const auto& [k, _] : j.items())
    if (!known.count(k)) return make_error(path + ": unknown field " + quote(k) + "; valid: " + join({known.begin(), known.end()}, ", "));
  ModelRecipe r;
  r.file = path;
  if (!j.contains("name") || !j["name"].is_string()) return make_error(path + ": field \"name\" must be a string");
  r.name = j["name"];
  if (!j.contains("seed") || !j["seed"].is_number_unsigned()) return make_error(path + ": field \"seed\" must be a non-negative whole number");
  r.seed = j["seed"];
  FP_TRY(r.n_embd, positive(j, path, "n_embd", 16384));
  FP_TRY(r.n_head, positive(j, path, "n_head", 256));
  FP_TRY(r.n_head_kv, positive(j, path, "n_head_kv", 256));
  FP_TRY(r.n_layer, positive(j, path, "n_layer", 256));
  FP_TRY(r.n_ff, positive(j, path, "n_ff", 65536));
  FP_TRY(r.n_ctx_train, positive(j, path, "n_ctx_train", 1u << 20));
  if (r.n_embd % r.n_head) return make_error(path + ": n_embd " + std::to_string(r.n_embd) + " is not a multiple of n_head " + std::to_string(r.n_head));
  if (r.n_head % r.n_head_kv) return make_error(path + ": n_head " + std::to_string(r.n_head) + " is not a multiple of n_head_kv " + std::to_string(r.n_head_kv));
  if (!j.contains("output") || !j["output"].is_string() || !ends_with(j["output"].get<std::string>(), ".gguf"))
    return make_error(path + ": field \"output\" must be a path ending in .gguf");
  r.output = j["output"];
  if (j.contains("sha256")) {
    if (!j["sha256"].is_string()) return make_error(path + ": field \"sha256\" must be a string of 64 hex digits");
    r.sha256 = j["sha256"];
  }
  return r;
}

std::string build_llama_gguf(const ModelRecipe& r) {
  const Vocab vocab = make_vocab();
  const uint64_t n_vocab = vocab.tokens.size();
  const uint64_t head = r.head_size();
  const uint64_t n_embd_kv = head * r.n_head_kv;

  GgufWriter w;
  w.add_kv("general.architecture", std::string("llama"));
  w.add_kv("general.name", "flashproof-" + r.name);
  w.add_kv("general.file_type", uint32_t{1});  // mostly F16
  w.add_kv("llama.context_length", r.n_ctx_train);
  w.add_kv("llama.embedding_length", r.n_embd);
  w.add_kv("llama.block_count", r.n_layer);
  w.add_kv("llama.feed_forward_length", r.n_ff);
  w.add_kv("llama.attention.head_count", r.n_head);
  w.add_kv("llama.attention.head_count_kv", r.n_head_kv);
  w.add_kv("llama.rope.dimension_count", static_cast<uint32_t>(head));
  w.add_kv("llama.rope.freq_base", 10000.0f);
  w.add_kv("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_kv("llama.vocab_size", static_cast<uint32_t>(n_vocab));
  w.add_kv("tokenizer.ggml.model", std::string("llama"));
  w.add_kv("tokenizer.ggml.tokens", vocab.tokens);
  w.add_kv("tokenizer.ggml.scores", vocab.scores);
  w.add_kv("tokenizer.ggml.token_type", vocab.types);
  w.add_kv("tokenizer.ggml.bos_token_id", uint32_t{1});
  w.add_kv("tokenizer.ggml.eos_token_id", uint32_t{2});
  w.add_kv("tokenizer.ggml.unknown_token_id", uint32_t{0});
  w.add_kv("tokenizer.ggml.add_bos_token", true);
  w.add_kv("tokenizer.chat_template",
           std::string("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
                       "message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
                       "{{ '<|im_start|>assistant\\n' }}{% endif %}"));

  auto mat = [&](const std::string& name, uint64_t n_in, uint64_t n_out) {
    w.add_tensor(name, {n_in, n_out}, GgufType::F16,
                 f16_tensor(r.seed, name, n_in * n_out, std::sqrt(3.0f / static_cast<float>(n_in))));
  };
  w.add_tensor("token_embd.weight", {r.n_embd, n_vocab}, GgufType::F16, f16_tensor(r.seed, "token_embd.weight", r.n_embd * n_vocab, 1.0f));
  for (uint32_t l = 0; l < r.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    w.add_tensor(b + "attn_norm.weight", {r.n_embd}, GgufType::F32, f32_ones(r.n_embd));
    mat(b + "attn_q.weight", r.n_embd, r.n_embd);
    mat(b + "attn_k.weight", r.n_embd, n_embd_kv);
    mat(b + "attn_v.weight", r.n_embd, n_embd_kv);
    mat(b + "attn_output.weight", r.n_embd, r.n_embd);
    w.add_tensor(b + "ffn_norm.weight", {r.n_embd}, GgufType::F32, f32_ones(r.n_embd));
    mat(b + "ffn_gate.weight", r.n_embd, r.n_ff);
    mat(b + "ffn_up.weight", r.n_embd, r.n_ff);
    mat(b + "ffn_down.weight", r.n_ff, r.n_embd);
  }
  w.add_tensor("output_norm.weight", {r.n_embd}, GgufType::F32, f32_ones(r.n_embd));
  // Output rows of tokens the model must never emit (control, bytes, letters) are zero, so their
  // logit is 0 while the maximum over the word rows is almost surely positive.
  std::string out = f16_tensor(r.seed, "output.weight", r.n_embd * n_vocab, std::sqrt(3.0f / static_cast<float>(r.n_embd)));
  for (uint64_t t = 0; t < n_vocab; ++t)
    if (!vocab.emittable[t]) std::fill(out.begin() + static_cast<long>(t * r.n_embd * 2), out.begin() + static_cast<long>((t + 1) * r.n_embd * 2), '\0');
  w.add_tensor("output.weight", {r.n_embd, n_vocab}, GgufType::F16, std::move(out));
  return w.serialize();
}

Result<ModelRecipe> recipe_with_head_size(const ModelRecipe& r, uint32_t head) {
  const std::string what = r.file + ": head size " + std::to_string(head);
  if (head < 8 || head % 2) return make_error(what + ": expected an even number from 8 (RoPE rotates pairs of dimensions)");
  if (static_cast<uint64_t>(head) * r.n_head > 16384)
    return make_error(what + " x " + std::to_string(r.n_head) + " heads = n_embd " + std::to_string(static_cast<uint64_t>(head) * r.n_head) +
                      ": above the generator's limit of 16384");
  ModelRecipe v = r;
  v.n_embd = head * r.n_head;
  v.name = r.name + "-hd" + std::to_string(head);
  v.output = (std::filesystem::path(r.output).parent_path() / "matrix" / (v.name + ".gguf")).string();
  v.sha256.clear();
  return v;
}

Result<std::string> write_recipe_model(const ModelRecipe& r, const std::string& path) {
  const std::string bytes = build_llama_gguf(r);
  const std::string sha = sha256_hex(bytes);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (std::filesystem::exists(path, ec))
    if (auto existing = sha256_file(path); existing && *existing == sha) return sha;
  FP_TRY_STATUS(write_file_atomic(path, bytes));
  return sha;
}

}  // namespace fp
