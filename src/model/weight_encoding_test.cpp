#include "model/weight_encoding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace fp {
namespace {

std::vector<float> uniform(size_t n, float scale, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> x(n);
  for (auto& v : x) v = d(g);
  return x;
}

// Largest error of decode(encode(x)) over blocks, each against its own bound.
void expect_round_trip(WeightType t, const std::vector<float>& x, float step_fraction) {
  const WeightEncoding& e = weight_encoding(t);
  std::vector<unsigned char> bytes(encoded_row_bytes(t, x.size()));
  encode_row(t, x.data(), x.size(), bytes.data());
  std::vector<float> y(x.size());
  decode_row(t, bytes.data(), x.size(), y.data());
  const size_t group = std::max<size_t>(e.block, 32);  // f16 has blocks of one: judge it over 32 values
  for (size_t b = 0; b < x.size() / group; ++b) {
    const auto first = x.begin() + static_cast<long>(b * group), last = first + static_cast<long>(group);
    const float range = *std::max_element(first, last) - *std::min_element(first, last);
    for (size_t i = b * group; i < (b + 1) * group; ++i)
      ASSERT_LE(std::fabs(x[i] - y[i]), range * step_fraction + 1e-6f) << e.name << " element " << i;
  }
}

TEST(WeightEncoding, LayoutsAreGgmls) {
  // ggml-common.h: block_q8_0 = half + 32 int8; block_q4_0 = half + 16 bytes; block_q4_K = 2 halves +
  // 12 scale bytes + 128 bytes; type codes of ggml.h's enum ggml_type.
  EXPECT_EQ(weight_encoding(WeightType::Q8_0).block_bytes, 34u);
  EXPECT_EQ(weight_encoding(WeightType::Q8_0).ggml_type, 8u);
  EXPECT_EQ(weight_encoding(WeightType::Q4_0).block_bytes, 18u);
  EXPECT_EQ(weight_encoding(WeightType::Q4_0).ggml_type, 2u);
  EXPECT_EQ(weight_encoding(WeightType::Q4_K).block_bytes, 144u);
  EXPECT_EQ(weight_encoding(WeightType::Q4_K).block, 256u);
  EXPECT_EQ(weight_encoding(WeightType::Q4_K).ggml_type, 12u);
  EXPECT_EQ(encoded_row_bytes(WeightType::F16, 4096), 8192u);
  EXPECT_EQ(encoded_row_bytes(WeightType::Q4_0, 4096), 4096u / 32 * 18);
}

TEST(WeightEncoding, RoundTripsWithinOneStep) {
  const auto x = uniform(4096, 0.05f, 7);
  // q8_0: 255 levels over [-amax, amax], error at most half a step (range / 254 / 2 ~ range / 508).
  expect_round_trip(WeightType::Q8_0, x, 1.0f / 250);
  // q4_0: 16 levels over the block, the far end clamped to +7: at most one step of range / 15.
  expect_round_trip(WeightType::Q4_0, x, 1.0f / 14);
  // q4_K: 16 levels per sub-block of 32 with 6-bit scales: at most about one step.
  expect_round_trip(WeightType::Q4_K, x, 1.0f / 12);
  expect_round_trip(WeightType::F16, x, 1e-3f);
}

TEST(WeightEncoding, Q8_0MatchesGgmlByHand) {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.27f;
  x[1] = -0.635f;
  x[2] = 0.004f;
  unsigned char b[34];
  encode_row(WeightType::Q8_0, x.data(), 32, b);
  EXPECT_FLOAT_EQ(half_to_float(static_cast<uint16_t>(b[0] | (b[1] << 8))), half_to_float(float_to_half(0.01f)));
  EXPECT_EQ(static_cast<int8_t>(b[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(b[3]), -64);  // roundf(-63.5) = -64: away from zero, as ggml's roundf
  EXPECT_EQ(static_cast<int8_t>(b[4]), 0);
}

TEST(WeightEncoding, Q4_0NibbleOrderIsGgmls) {
  std::vector<float> x(32, 0.0f);
  x[0] = -8.0f;  // the largest magnitude: d = -8 / -8 = 1, so q = x + 8
  x[16] = 3.0f;
  unsigned char b[18];
  encode_row(WeightType::Q4_0, x.data(), 32, b);
  EXPECT_EQ(half_to_float(static_cast<uint16_t>(b[0] | (b[1] << 8))), 1.0f);
  EXPECT_EQ(b[2], 0x00 | (11 << 4));  // element 0 in the low nibble, element 16 in the high one
  EXPECT_EQ(b[3], 8 | (8 << 4));
}

TEST(WeightEncoding, ZeroRowsStayZero) {
  std::vector<float> x(256, 0.0f), y(256, 1.0f);
  for (WeightType t : {WeightType::Q8_0, WeightType::Q4_0, WeightType::Q4_K}) {
    std::vector<unsigned char> b(encoded_row_bytes(t, 256));
    encode_row(t, x.data(), 256, b.data());
    decode_row(t, b.data(), 256, y.data());
    for (float v : y) ASSERT_EQ(v, 0.0f) << weight_encoding(t).name;
  }
}

TEST(WeightEncoding, ParseNamesTheValidTypes) {
  EXPECT_EQ(*parse_weight_type("q4_0"), WeightType::Q4_0);
  EXPECT_EQ(*parse_weight_type("q4_k"), WeightType::Q4_K);
  auto bad = parse_weight_type("q5_k");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("f16, q8_0, q4_0, q4_k"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(parse_weight_type("f32").ok());  // norms only, never a recipe's matrices
}

TEST(WeightEncoding, TheCpusHalfConversionGivesTheSameBits) {
  // Normal, subnormal and overflowing halves, ties included: the fast path must not change a byte.
  std::vector<float> x = uniform(4099, 1.0f, 11);
  for (size_t i = 0; i < x.size(); i += 3) x[i] *= 1e-5f;
  for (size_t i = 1; i < x.size(); i += 7) x[i] *= 1e5f;
  x[2] = 1.0009765625f + 0.00048828125f;  // halfway between two halves: to even
  std::vector<unsigned char> fast(x.size() * 2), portable(x.size() * 2);
  encode_row(WeightType::F16, x.data(), x.size(), fast.data());
  encode_row_portable(WeightType::F16, x.data(), x.size(), portable.data());
  EXPECT_EQ(fast, portable);
}

TEST(WeightEncoding, HalfRoundTrip) {
  for (uint32_t h = 0; h < 0x7c00; h += 7) EXPECT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h);
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x0001), 5.960464477539063e-8f);
}

}  // namespace
}  // namespace fp
