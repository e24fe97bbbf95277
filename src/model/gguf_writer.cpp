#include "model/gguf_writer.h"

#include <cstring>

#include "model/gguf_value_type.h"

namespace fp {
namespace {

constexpr uint64_t kAlignment = 32;

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

void put_value(std::string& out, const GgufValue& v) {
  struct Visitor {
    std::string& out;
    void operator()(uint32_t x) { put_u32(out, gguf::kU32); put_u32(out, x); }
    void operator()(int32_t x) { put_u32(out, gguf::kI32); out.append(reinterpret_cast<const char*>(&x), 4); }
    void operator()(float x) { put_u32(out, gguf::kF32); out.append(reinterpret_cast<const char*>(&x), 4); }
    void operator()(bool x) { put_u32(out, gguf::kBool); out += static_cast<char>(x ? 1 : 0); }
    void operator()(const std::string& s) { put_u32(out, gguf::kString); put_str(out, s); }
    void operator()(const std::vector<std::string>& a) {
      put_u32(out, gguf::kArray); put_u32(out, gguf::kString); put_u64(out, a.size());
      for (const auto& s : a) put_str(out, s);
    }
    void operator()(const std::vector<float>& a) {
      put_u32(out, gguf::kArray); put_u32(out, gguf::kF32); put_u64(out, a.size());
      out.append(reinterpret_cast<const char*>(a.data()), a.size() * 4);
    }
    void operator()(const std::vector<int32_t>& a) {
      put_u32(out, gguf::kArray); put_u32(out, gguf::kI32); put_u64(out, a.size());
      out.append(reinterpret_cast<const char*>(a.data()), a.size() * 4);
    }
  };
  std::visit(Visitor{out}, v);
}

uint64_t align_up(uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

void GgufWriter::add_kv(std::string key, GgufValue value) { kvs_.emplace_back(std::move(key), std::move(value)); }

void GgufWriter::add_tensor(std::string name, std::vector<uint64_t> dims, GgufType type, std::string data) {
  tensors_.push_back({std::move(name), std::move(dims), type, std::move(data)});
}

std::string GgufWriter::serialize() const {
  std::string out;
  out += "GGUF";
  put_u32(out, 3);
  put_u64(out, tensors_.size());
  put_u64(out, kvs_.size());
  for (const auto& [k, v] : kvs_) {
    put_str(out, k);
    put_value(out, v);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    put_str(out, t.name);
    put_u32(out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put_u64(out, d);
    put_u32(out, static_cast<uint32_t>(t.type));
    put_u64(out, offset);
    offset = align_up(offset + t.data.size());
  }
  out.resize(align_up(out.size()), '\0');
  for (const auto& t : tensors_) {
    out += t.data;
    out.resize(align_up(out.size()), '\0');
  }
  return out;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(half);
}

}  // namespace fp
