#include "model/weight_encoding.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "util/text.h"

namespace fp {
namespace {

// ggml's llama_ftype codes (general.file_type): 0 all F32, 1 mostly F16, 7 mostly Q8_0, 2 mostly Q4_0,
// 14 mostly Q4_K_S (every matrix q4_K; Q4_K_M would mix in q6_K).
const WeightEncoding kEncodings[] = {
    {WeightType::F32, "f32", 0, 1, 4, 0},
    {WeightType::F16, "f16", 1, 1, 2, 1},
    {WeightType::Q8_0, "q8_0", 8, 32, 34, 7},
    {WeightType::Q4_0, "q4_0", 2, 32, 18, 2},
    {WeightType::Q4_K, "q4_k", 12, 256, 144, 14},
};

void put_half(unsigned char* p, float f) {
  const uint16_t h = float_to_half(f);
  p[0] = static_cast<unsigned char>(h & 0xff);
  p[1] = static_cast<unsigned char>(h >> 8);
}
float get_half(const unsigned char* p) { return half_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8))); }

// f16 rows with the CPU's own conversion where it has one (F16C: IEEE round to nearest even, the
// same bits as float_to_half), 8 values at a time: the generator's hottest loop.
#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void f16_row_f16c(const float* x, uint64_t n, unsigned char* out) {
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
  }
  for (; i < n; ++i) put_half(out + 2 * i, x[i]);
}
bool have_f16c() {
  static const bool yes = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return yes;
}
#endif

void f16_row(const float* x, uint64_t n, unsigned char* out) {
#if defined(__x86_64__)
  if (have_f16c()) return f16_row_f16c(x, n, out);
#endif
  for (uint64_t i = 0; i < n; ++i) put_half(out + 2 * i, x[i]);
}

// ggml's quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d).
void encode_q8_0(const float* x, unsigned char* out) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(out, d);
  for (int j = 0; j < 32; ++j) out[2 + j] = static_cast<unsigned char>(static_cast<int8_t>(std::roundf(x[j] * id)));
}

// ggml's quantize_row_q4_0_ref: d = (the value of largest magnitude) / -8, nibbles x/d + 8; the
// first 16 values in the low nibbles, the last 16 in the high ones.
void encode_q4_0(const float* x, unsigned char* out) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_half(out, d);
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
    const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x[16 + j] * id + 8.5f)));
    out[2 + j] = static_cast<unsigned char>(q0 | (q1 << 4));
  }
}

int nearest(float v) { return static_cast<int>(std::lround(v)); }

// block_q4_K: half d, half dmin, 12 bytes of 6-bit sub-block scales and mins, 128 bytes of nibbles.
// Eight sub-blocks of 32: value = d * scale_j * q - dmin * min_j. The sub-block's scale and min are
// its range over 15 and minus its minimum (a simpler search than ggml's make_qkx2_quants; the
// layout, which is what the runtime reads, is ggml's).
void encode_q4_k(const float* x, unsigned char* out) {
  float scale[8], min[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < 8; ++s) {
    float lo = x[32 * s], hi = x[32 * s];
    for (int j = 1; j < 32; ++j) {
      lo = std::min(lo, x[32 * s + j]);
      hi = std::max(hi, x[32 * s + j]);
    }
    lo = std::min(lo, 0.0f);
    scale[s] = (hi - lo) / 15.0f;
    min[s] = -lo;
    max_scale = std::max(max_scale, scale[s]);
    max_min = std::max(max_min, min[s]);
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  unsigned char ls[8], lm[8];
  for (int s = 0; s < 8; ++s) {
    ls[s] = static_cast<unsigned char>(std::min(63, nearest(inv_scale * scale[s])));
    lm[s] = static_cast<unsigned char>(std::min(63, nearest(inv_min * min[s])));
  }
  put_half(out, max_scale / 63.0f);
  put_half(out + 2, max_min / 63.0f);
  unsigned char* sc = out + 4;
  std::memset(sc, 0, 12);
  for (int s = 0; s < 8; ++s) {
    if (s < 4) {
      sc[s] = ls[s];
      sc[s + 4] = lm[s];
    } else {
      sc[s + 4] = static_cast<unsigned char>((ls[s] & 0xF) | ((lm[s] & 0xF) << 4));
      sc[s - 4] = static_cast<unsigned char>(sc[s - 4] | ((ls[s] >> 4) << 6));
      sc[s] = static_cast<unsigned char>(sc[s] | ((lm[s] >> 4) << 6));
    }
  }
  const float d = get_half(out), dmin = get_half(out + 2);
  unsigned char q[256];
  for (int s = 0; s < 8; ++s) {
    const float dd = d * static_cast<float>(ls[s]);
    const float dm = dmin * static_cast<float>(lm[s]);
    for (int j = 0; j < 32; ++j) {
      const int v = dd != 0.0f ? nearest((x[32 * s + j] + dm) / dd) : 0;
      q[32 * s + j] = static_cast<unsigned char>(std::clamp(v, 0, 15));
    }
  }
  unsigned char* qs = out + 16;
  for (int j = 0; j < 256; j += 64)
    for (int l = 0; l < 32; ++l) qs[j / 2 + l] = static_cast<unsigned char>(q[j + l] | (q[j + l + 32] << 4));
}

// ggml's get_scale_min_k4.
void scale_min_k4(int j, const unsigned char* q, int& d, int& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

}  // namespace

const WeightEncoding& weight_encoding(WeightType type) {
  for (const auto& e : kEncodings)
    if (e.type == type) return e;
  return kEncodings[1];
}

std::vector<std::string> weight_type_names() { return {"f16", "q8_0", "q4_0", "q4_k"}; }

Result<WeightType> parse_weight_type(const std::string& name) {
  for (const auto& e : kEncodings)
    if (e.type != WeightType::F32 && name == e.name) return e.type;
  return make_error("\"" + name + "\": expected one of " + join(weight_type_names(), ", "));
}

uint64_t encoded_row_bytes(WeightType type, uint64_t n) {
  const WeightEncoding& e = weight_encoding(type);
  return n / e.block * e.block_bytes;
}

void encode_row_portable(WeightType type, const float* x, uint64_t n, unsigned char* out) {
  if (type != WeightType::F16) return encode_row(type, x, n, out);
  for (uint64_t i = 0; i < n; ++i) put_half(out + 2 * i, x[i]);
}

void encode_row(WeightType type, const float* x, uint64_t n, unsigned char* out) {
  switch (type) {
    case WeightType::F32:
      std::memcpy(out, x, n * 4);
      return;
    case WeightType::F16:
      f16_row(x, n, out);
      return;
    case WeightType::Q8_0:
      for (uint64_t b = 0; b < n / 32; ++b) encode_q8_0(x + 32 * b, out + 34 * b);
      return;
    case WeightType::Q4_0:
      for (uint64_t b = 0; b < n / 32; ++b) encode_q4_0(x + 32 * b, out + 18 * b);
      return;
    case WeightType::Q4_K:
      for (uint64_t b = 0; b < n / 256; ++b) encode_q4_k(x + 256 * b, out + 144 * b);
      return;
  }
}

void decode_row(WeightType type, const unsigned char* in, uint64_t n, float* y) {
  switch (type) {
    case WeightType::F32:
      std::memcpy(y, in, n * 4);
      return;
    case WeightType::F16:
      for (uint64_t i = 0; i < n; ++i) y[i] = get_half(in + 2 * i);
      return;
    case WeightType::Q8_0:
      for (uint64_t b = 0; b < n / 32; ++b) {
        const unsigned char* p = in + 34 * b;
        const float d = get_half(p);
        for (int j = 0; j < 32; ++j) y[32 * b + j] = d * static_cast<float>(static_cast<int8_t>(p[2 + j]));
      }
      return;
    case WeightType::Q4_0:
      for (uint64_t b = 0; b < n / 32; ++b) {
        const unsigned char* p = in + 18 * b;
        const float d = get_half(p);
        for (int j = 0; j < 16; ++j) {
          y[32 * b + j] = d * static_cast<float>((p[2 + j] & 0xF) - 8);
          y[32 * b + 16 + j] = d * static_cast<float>((p[2 + j] >> 4) - 8);
        }
      }
      return;
    case WeightType::Q4_K:
      for (uint64_t b = 0; b < n / 256; ++b) {
        const unsigned char* p = in + 144 * b;
        const float d = get_half(p), dmin = get_half(p + 2);
        const unsigned char* q = p + 16;
        float* out = y + 256 * b;
        for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
          int sc, m;
          scale_min_k4(is, p + 4, sc, m);
          const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
          scale_min_k4(is + 1, p + 4, sc, m);
          const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
          for (int l = 0; l < 32; ++l) out[j + l] = d1 * static_cast<float>(q[l] & 0xF) - m1;
          for (int l = 0; l < 32; ++l) out[j + 32 + l] = d2 * static_cast<float>(q[l] >> 4) - m2;
        }
      }
      return;
  }
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

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);  // zero and subnormals
    return sign ? -f : f;
  }
  const uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp - 15 + 127) << 23) | (mant << 13));
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace fp
