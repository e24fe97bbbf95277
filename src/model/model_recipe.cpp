#include "model/model_recipe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

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

// A splitmix64 stream per tensor, so a tensor's values depend only on the seed and its name. Value
// i of the stream is the mix of state0 + (i + 1) * gamma: any chunk of a tensor is computed on its own.
constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;
float seeded_uniform(uint64_t state0, uint64_t i, float scale) {  // in [-scale, scale)
  uint64_t z = state0 + (i + 1) * kGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) / 9007199254740992.0;
  return static_cast<float>((2.0 * u - 1.0) * scale);
}

uint64_t name_hash(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Rows of n_in uniform values in [-scale, scale), encoded as `type`; rows for which `zero_row` says so
// are zero (output rows of tokens the model must never emit).
GgufRowFill random_rows(uint64_t seed, const std::string& name, uint64_t n_in, float scale, WeightType type,
                        std::function<bool(uint64_t)> zero_row = {}) {
  const uint64_t state0 = seed ^ name_hash(name);
  return [=](uint64_t begin, uint64_t end, unsigned char* out) {
    std::vector<float> row(n_in);
    const uint64_t row_bytes = encoded_row_bytes(type, n_in);
    for (uint64_t r = begin; r < end; ++r) {
      if (zero_row && zero_row(r))
        std::fill(row.begin(), row.end(), 0.0f);
      else
        for (uint64_t i = 0; i < n_in; ++i) row[i] = seeded_uniform(state0, r * n_in + i, scale);
      encode_row(type, row.data(), n_in, out + (r - begin) * row_bytes);
    }
  };
}

GgufRowFill f32_ones(uint64_t n) {
  return [n](uint64_t begin, uint64_t end, unsigned char* out) {
    const float one = 1.0f;
    for (uint64_t i = 0; i < (end - begin) * n; ++i) std::memcpy(out + 4 * i, &one, 4);
  };
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

// `n_vocab` tokens at least: the base vocabulary, then never-emitted pieces that no text contains
// (a private-use character and a number), so that the embedding and output matrices have the
// deployed model's size while tokenization stays the base vocabulary's.
Vocab make_vocab(uint32_t n_vocab) {
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
  for (uint32_t i = 0; v.tokens.size() < n_vocab; ++i) add("\xee\x80\x80" + std::to_string(i), -1e9f, 1, false);  // U+E000
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
  static const std::set<std::string> known = {"name",   "seed",        "n_embd",   "n_head",   "n_head_kv",   "n_layer",
                                              "n_ff",   "n_ctx_train", "head_dim", "n_vocab",  "weight_type", "copies",
                                              "output", "sha256",      "comment",  "gguf_name"};
  for (const auto& [k, _] : j.items())
    if (!known.count(k)) return make_error(path + ": unknown field " + quote(k) + "; valid: " + join({known.begin(), known.end()}, ", "));
  ModelRecipe r;
  r.file = path;
  if (!j.contains("name") || !j["name"].is_string()) return make_error(path + ": field \"name\" must be a string");
  r.name = j["name"];
  if (j.contains("gguf_name")) {
    if (!j["gguf_name"].is_string() || j["gguf_name"].get<std::string>().empty())
      return make_error(path + ": field \"gguf_name\" must be a non-empty string (the file's general.name)");
    r.gguf_name = j["gguf_name"];
  }
  if (!j.contains("seed") || !j["seed"].is_number_unsigned()) return make_error(path + ": field \"seed\" must be a non-negative whole number");
  r.seed = j["seed"];
  FP_TRY(r.n_embd, positive(j, path, "n_embd", 16384));
  FP_TRY(r.n_head, positive(j, path, "n_head", 256));
  FP_TRY(r.n_head_kv, positive(j, path, "n_head_kv", 256));
  FP_TRY(r.n_layer, positive(j, path, "n_layer", 256));
  FP_TRY(r.n_ff, positive(j, path, "n_ff", 65536));
  FP_TRY(r.n_ctx_train, positive(j, path, "n_ctx_train", 1u << 20));
  if (j.contains("head_dim")) {
    FP_TRY(r.head_dim, positive(j, path, "head_dim", 1024));
    if (r.head_dim % 2) return make_error(path + ": field \"head_dim\" = " + std::to_string(r.head_dim) + ": expected an even number (RoPE rotates pairs)");
  } else if (r.n_embd % r.n_head) {
    return make_error(path + ": n_embd " + std::to_string(r.n_embd) + " is not a multiple of n_head " + std::to_string(r.n_head) +
                      " (or give \"head_dim\")");
  }
  if (r.n_head % r.n_head_kv) return make_error(path + ": n_head " + std::to_string(r.n_head) + " is not a multiple of n_head_kv " + std::to_string(r.n_head_kv));
  if (j.contains("n_vocab")) {
    FP_TRY(r.n_vocab, positive(j, path, "n_vocab", 1u << 20));
  }
  if (j.contains("weight_type")) {
    if (!j["weight_type"].is_string()) return make_error(path + ": field \"weight_type\" must be a string, one of " + join(weight_type_names(), ", "));
    auto t = parse_weight_type(j["weight_type"]);
    if (!t) return make_error(path + ": field \"weight_type\" = " + t.error().message);
    r.weight_type = *t;
  }
  if (j.contains("copies")) {
    if (!j["copies"].is_string()) return make_error(path + ": field \"copies\" must be a string naming the public config the shape copies");
    r.copies = j["copies"];
  }
  if (!j.contains("output") || !j["output"].is_string() || !ends_with(j["output"].get<std::string>(), ".gguf"))
    return make_error(path + ": field \"output\" must be a path ending in .gguf");
  r.output = j["output"];
  if (j.contains("sha256")) {
    if (!j["sha256"].is_string()) return make_error(path + ": field \"sha256\" must be a string of 64 hex digits");
    r.sha256 = j["sha256"];
  }
  return r;
}

WeightType matrix_weight_type(const ModelRecipe& r, uint64_t row_length) {
  WeightType t = r.weight_type;
  // A row must hold whole blocks: q4_K falls back to q8_0, the 32-blocks to f16 (as llama-quantize
  // falls back for rows it cannot quantize).
  if (row_length % weight_encoding(t).block) t = WeightType::Q8_0;
  if (row_length % weight_encoding(t).block) t = WeightType::F16;
  return t;
}

GgufWriter llama_gguf_plan(const ModelRecipe& r) {
  auto vocab = std::make_shared<const Vocab>(make_vocab(r.n_vocab));
  const uint64_t n_vocab = vocab->tokens.size();
  const uint64_t head = r.head_size();
  const uint64_t n_embd_q = head * r.n_head, n_embd_kv = head * r.n_head_kv;

  GgufWriter w;
  w.add_kv("general.architecture", std::string("llama"));
  w.add_kv("general.name", r.gguf_name.empty() ? "flashproof-" + r.name : r.gguf_name);
  w.add_kv("general.file_type", weight_encoding(r.weight_type).file_type);
  w.add_kv("llama.context_length", r.n_ctx_train);
  w.add_kv("llama.embedding_length", r.n_embd);
  w.add_kv("llama.block_count", r.n_layer);
  w.add_kv("llama.feed_forward_length", r.n_ff);
  w.add_kv("llama.attention.head_count", r.n_head);
  w.add_kv("llama.attention.head_count_kv", r.n_head_kv);
  if (r.head_dim) {  // a head size apart from n_embd / n_head (Mistral-Nemo, Gemma)
    w.add_kv("llama.attention.key_length", r.head_dim);
    w.add_kv("llama.attention.value_length", r.head_dim);
  }
  w.add_kv("llama.rope.dimension_count", static_cast<uint32_t>(head));
  w.add_kv("llama.rope.freq_base", 10000.0f);
  w.add_kv("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_kv("llama.vocab_size", static_cast<uint32_t>(n_vocab));
  w.add_kv("tokenizer.ggml.model", std::string("llama"));
  w.add_kv("tokenizer.ggml.tokens", vocab->tokens);
  w.add_kv("tokenizer.ggml.scores", vocab->scores);
  w.add_kv("tokenizer.ggml.token_type", vocab->types);
  w.add_kv("tokenizer.ggml.bos_token_id", uint32_t{1});
  w.add_kv("tokenizer.ggml.eos_token_id", uint32_t{2});
  w.add_kv("tokenizer.ggml.unknown_token_id", uint32_t{0});
  w.add_kv("tokenizer.ggml.add_bos_token", true);
  w.add_kv("tokenizer.chat_template",
           std::string("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
                       "message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
                       "{{ '<|im_start|>assistant\\n' }}{% endif %}"));

  auto mat = [&](const std::string& name, uint64_t n_in, uint64_t n_out) {
    const WeightType t = matrix_weight_type(r, n_in);
    w.add_tensor(name, {n_in, n_out}, t, random_rows(r.seed, name, n_in, std::sqrt(3.0f / static_cast<float>(n_in)), t));
  };
  const WeightType embd_type = matrix_weight_type(r, r.n_embd);
  w.add_tensor("token_embd.weight", {r.n_embd, n_vocab}, embd_type, random_rows(r.seed, "token_embd.weight", r.n_embd, 1.0f, embd_type));
  for (uint32_t l = 0; l < r.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    w.add_tensor(b + "attn_norm.weight", {r.n_embd}, WeightType::F32, f32_ones(r.n_embd));
    mat(b + "attn_q.weight", r.n_embd, n_embd_q);
    mat(b + "attn_k.weight", r.n_embd, n_embd_kv);
    mat(b + "attn_v.weight", r.n_embd, n_embd_kv);
    mat(b + "attn_output.weight", n_embd_q, r.n_embd);
    w.add_tensor(b + "ffn_norm.weight", {r.n_embd}, WeightType::F32, f32_ones(r.n_embd));
    mat(b + "ffn_gate.weight", r.n_embd, r.n_ff);
    mat(b + "ffn_up.weight", r.n_embd, r.n_ff);
    mat(b + "ffn_down.weight", r.n_ff, r.n_embd);
  }
  w.add_tensor("output_norm.weight", {r.n_embd}, WeightType::F32, f32_ones(r.n_embd));
  // Output rows of tokens the model must never emit (control, bytes, letters, padding) are zero, so
  // their logit is 0 while the maximum over the word rows is almost surely positive.
  w.add_tensor("output.weight", {r.n_embd, n_vocab}, embd_type,
               random_rows(r.seed, "output.weight", r.n_embd, std::sqrt(3.0f / static_cast<float>(r.n_embd)), embd_type,
                           [vocab](uint64_t row) { return !vocab->emittable[row]; }));
  return w;
}

std::string build_llama_gguf(const ModelRecipe& r) { return llama_gguf_plan(r).serialize(); }

Result<ModelRecipe> recipe_with_head_size(const ModelRecipe& r, uint32_t head) {
  const std::string what = r.file + ": head size " + std::to_string(head);
  if (head < 8 || head % 2) return make_error(what + ": expected an even number from 8 (RoPE rotates pairs of dimensions)");
  ModelRecipe v = r;
  if (r.head_dim) {  // the head size is its own field: the embedding stays the deployed model's
    v.head_dim = head;
  } else {
    if (static_cast<uint64_t>(head) * r.n_head > 16384)
      return make_error(what + " x " + std::to_string(r.n_head) + " heads = n_embd " + std::to_string(static_cast<uint64_t>(head) * r.n_head) +
                        ": above the generator's limit of 16384");
    v.n_embd = head * r.n_head;
  }
  v.name = r.name + "-hd" + std::to_string(head);
  v.output = (std::filesystem::path(r.output).parent_path() / "matrix" / (v.name + ".gguf")).string();
  v.sha256.clear();
  return v;
}

ModelRecipe recipe_with_weight_type(const ModelRecipe& r, WeightType type) {
  if (type == r.weight_type) return r;
  ModelRecipe v = r;
  v.weight_type = type;
  v.name = r.name + "-" + weight_encoding(type).name;
  const std::filesystem::path out(r.output);
  v.output = (out.parent_path() / (out.stem().string() + "-" + weight_encoding(type).name + ".gguf")).string();
  v.sha256.clear();
  return v;
}

Result<std::string> write_recipe_model(const ModelRecipe& r, const std::string& path, unsigned threads) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (!r.sha256.empty() && fs::exists(path, ec))
    if (auto existing = sha256_file(path); existing && *existing == r.sha256) return r.sha256;
  const GgufWriter plan = llama_gguf_plan(r);
  // A private temporary beside the target (same file system, so the rename is atomic), never a
  // half-written model at `path`.
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return make_error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  ::fchmod(fd, 0644);
  Sha256Stream sha;
  int write_errno = 0;
  const bool ok = plan.write(
      [&](std::string_view b) {
        sha.update(b);
        while (!b.empty()) {
          const ssize_t n = ::write(fd, b.data(), b.size());
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) {
            write_errno = errno;
            return false;
          }
          b.remove_prefix(static_cast<size_t>(n));
        }
        return true;
      },
      threads ? threads : std::max(1u, std::thread::hardware_concurrency()));
  if (!ok || ::close(fd) != 0) {
    const int e = write_errno ? write_errno : errno;
    if (ok) ::close(fd);
    ::unlink(tmp.c_str());
    return make_error(path + ": write failed: " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return make_error(path + ": rename failed: " + std::strerror(e));
  }
  return sha.hex();
}

}  // namespace fp
