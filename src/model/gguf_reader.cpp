#include "model/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "util/text.h"
#include "model/gguf_value_type.h"

namespace fp {
namespace {

// Metadata beyond this is not read (the largest tokenizers hold a few MiB of strings).
constexpr size_t kMaxMetadataBytes = 64u << 20;

size_t scalar_size(uint32_t type) {
  switch (type) {
    case gguf::kU8: case gguf::kI8: case gguf::kBool: return 1;
    case gguf::kU16: case gguf::kI16: return 2;
    case gguf::kU32: case gguf::kI32: case gguf::kF32: return 4;
    case gguf::kU64: case gguf::kI64: case gguf::kF64: return 8;
    default: return 0;
  }
}

class Cursor {
 public:
  Cursor(std::string_view bytes, std::string source) : b_(bytes), source_(std::move(source)) {}

  Error error(const std::string& what) const {
    return make_error(source_ + ": byte " + std::to_string(pos_) + ": " + what);
  }
  Error truncated(const std::string& reading) const {
    return error("file ends while reading " + reading + " (" + std::to_string(b_.size()) +
                 " bytes): truncated or not a GGUF file");
  }

  template <typename T>
  Result<T> get(const std::string& reading) {
    if (b_.size() - pos_ < sizeof(T)) return truncated(reading);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  Result<std::string> string(const std::string& reading) {
    FP_TRY(uint64_t n, get<uint64_t>(reading + " (length)"));
    if (n > b_.size() - pos_) return truncated(reading + " (" + std::to_string(n) + " bytes)");
    std::string s(b_.substr(pos_, n));
    pos_ += n;
    return s;
  }

  Status skip(uint64_t n, const std::string& reading) {
    if (n > b_.size() - pos_) return truncated(reading);
    pos_ += n;
    return ok_status();
  }

 private:
  std::string_view b_;
  std::string source_;
  size_t pos_ = 0;
};

Result<GgufMetaValue> read_scalar(Cursor& c, uint32_t type, const std::string& key) {
  GgufMetaValue v;
  v.type = type;
  const std::string what = "the value of " + quote(key);
  switch (type) {
    case gguf::kU8: { FP_TRY(uint8_t x, c.get<uint8_t>(what)); v.integer = x; break; }
    case gguf::kI8: { FP_TRY(int8_t x, c.get<int8_t>(what)); v.integer = x; break; }
    case gguf::kU16: { FP_TRY(uint16_t x, c.get<uint16_t>(what)); v.integer = x; break; }
    case gguf::kI16: { FP_TRY(int16_t x, c.get<int16_t>(what)); v.integer = x; break; }
    case gguf::kU32: { FP_TRY(uint32_t x, c.get<uint32_t>(what)); v.integer = x; break; }
    case gguf::kI32: { FP_TRY(int32_t x, c.get<int32_t>(what)); v.integer = x; break; }
    case gguf::kU64: { FP_TRY(uint64_t x, c.get<uint64_t>(what)); v.integer = static_cast<int64_t>(x); break; }
    case gguf::kI64: { FP_TRY(int64_t x, c.get<int64_t>(what)); v.integer = x; break; }
    case gguf::kBool: { FP_TRY(uint8_t x, c.get<uint8_t>(what)); v.integer = x ? 1 : 0; break; }
    case gguf::kF32: { FP_TRY(float x, c.get<float>(what)); v.number = x; return v; }
    case gguf::kF64: { FP_TRY(double x, c.get<double>(what)); v.number = x; return v; }
    case gguf::kString: { FP_TRY(v.text, c.string(what)); return v; }
    default:
      return c.error("key " + quote(key) + " has value type " + std::to_string(type) +
                     "; valid GGUF types are 0..12");
  }
  v.number = static_cast<double>(*v.integer);
  return v;
}

Result<GgufMetaValue> read_value(Cursor& c, uint32_t type, const std::string& key) {
  if (type != gguf::kArray) return read_scalar(c, type, key);
  GgufMetaValue v;
  v.type = gguf::kArray;
  FP_TRY(uint32_t elem, c.get<uint32_t>("the array type of " + quote(key)));
  FP_TRY(v.array_count, c.get<uint64_t>("the array length of " + quote(key)));
  if (elem == gguf::kString) {
    for (uint64_t i = 0; i < v.array_count; ++i) {
      FP_TRY(std::string element, c.string("element " + std::to_string(i) + " of " + quote(key)));
      v.longest_string = std::max<uint64_t>(v.longest_string, element.size());
    }
    return v;
  }
  size_t size = scalar_size(elem);
  if (size == 0)
    return c.error("array " + quote(key) + " has element type " + std::to_string(elem) +
                   "; valid: numbers, booleans or strings");
  if (v.array_count > kMaxMetadataBytes / size) return c.truncated("array " + quote(key));
  FP_TRY_STATUS(c.skip(v.array_count * size, "array " + quote(key)));
  return v;
}

Result<int> positive_int(const GgufMetadata& m, const std::string& key) {
  auto v = m.integer(key);
  if (!v) return make_error(m.source + ": GGUF key " + quote(key) + " is missing or not a whole number");
  if (*v <= 0 || *v > 1000000) return make_error(m.source + ": GGUF key " + quote(key) + " = " + std::to_string(*v) + " is out of range 1..1000000");
  return static_cast<int>(*v);
}

}  // namespace

std::optional<int64_t> GgufMetadata::integer(const std::string& key) const {
  auto it = values.find(key);
  return it == values.end() ? std::nullopt : it->second.integer;
}

std::optional<std::string> GgufMetadata::text(const std::string& key) const {
  auto it = values.find(key);
  return it == values.end() ? std::nullopt : it->second.text;
}

Result<GgufMetadata> parse_gguf_metadata(std::string_view bytes, const std::string& source) {
  Cursor c(bytes, source);
  GgufMetadata m;
  m.source = source;
  if (bytes.size() < 4 || bytes.substr(0, 4) != "GGUF")
    return make_error(source + ": not a GGUF file (the first 4 bytes are not \"GGUF\")");
  FP_TRY_STATUS(c.skip(4, "the magic"));
  FP_TRY(m.version, c.get<uint32_t>("the version"));
  if (m.version < 2 || m.version > 3)
    return c.error("GGUF version " + std::to_string(m.version) + " is not supported; valid: 2 or 3");
  FP_TRY(m.tensor_count, c.get<uint64_t>("the tensor count"));
  FP_TRY(uint64_t kv_count, c.get<uint64_t>("the key/value count"));
  for (uint64_t i = 0; i < kv_count; ++i) {
    FP_TRY(std::string key, c.string("key " + std::to_string(i) + " of " + std::to_string(kv_count)));
    FP_TRY(uint32_t type, c.get<uint32_t>("the type of " + quote(key)));
    FP_TRY(m.values[key], read_value(c, type, key));
  }
  return m;
}

Result<GgufMetadata> read_gguf_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open the model file");
  std::string bytes(kMaxMetadataBytes, '\0');
  in.read(&bytes[0], static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  return parse_gguf_metadata(bytes, path);
}

Result<ModelFacts> model_facts(const GgufMetadata& m) {
  ModelFacts f;
  f.source = m.source;
  auto arch = m.text("general.architecture");
  if (!arch || arch->empty()) return make_error(m.source + ": GGUF key \"general.architecture\" is missing");
  f.architecture = *arch;
  const std::string a = *arch + ".";
  FP_TRY(f.layers, positive_int(m, a + "block_count"));
  FP_TRY(f.n_embd, positive_int(m, a + "embedding_length"));
  FP_TRY(f.n_head, positive_int(m, a + "attention.head_count"));
  f.n_head_kv = m.integer(a + "attention.head_count_kv") ? static_cast<int>(*m.integer(a + "attention.head_count_kv")) : f.n_head;
  f.head_size_k = f.n_embd / f.n_head;
  if (m.integer(a + "attention.key_length")) {
    FP_TRY(f.head_size_k, positive_int(m, a + "attention.key_length"));
  }
  f.head_size_v = f.head_size_k;
  if (m.integer(a + "attention.value_length")) {
    FP_TRY(f.head_size_v, positive_int(m, a + "attention.value_length"));
  }
  if (auto ctx = m.integer(a + "context_length"); ctx && *ctx > 0 && *ctx <= INT32_MAX) f.trained_context = static_cast<int>(*ctx);
  if (auto ft = m.integer("general.file_type"); ft && *ft >= 0 && *ft < 1024) f.file_type = static_cast<int>(*ft);
  if (auto t = m.values.find("tokenizer.ggml.tokens"); t != m.values.end()) f.longest_token_bytes = static_cast<size_t>(t->second.longest_string);
  return f;
}

Result<ModelFacts> read_model_facts(const std::string& path) {
  FP_TRY(GgufMetadata m, read_gguf_metadata(path));
  return model_facts(m);
}

std::string file_type_name(int file_type) {
  // llama.cpp's enum llama_ftype (include/llama.h).
  static const std::map<int, std::string> names = {
      {0, "f32"},     {1, "f16"},     {2, "q4_0"},    {3, "q4_1"},    {7, "q8_0"},    {8, "q5_0"},   {9, "q5_1"},
      {10, "q2_k"},   {11, "q3_k_s"}, {12, "q3_k_m"}, {13, "q3_k_l"}, {14, "q4_k_s"}, {15, "q4_k_m"}, {16, "q5_k_s"},
      {17, "q5_k_m"}, {18, "q6_k"},   {32, "bf16"},
  };
  auto it = names.find(file_type);
  return it != names.end() ? it->second : "ftype " + std::to_string(file_type);
}

}  // namespace fp
