// How a model's weight matrices are stored in the GGUF file: f16, or one of ggml's block
// quantizations (q8_0, q4_0, q4_K). The encoders reproduce ggml's own block layouts
// (ggml-common.h: block_q8_0, block_q4_0, block_q4_K) so that llama.cpp loads them; they are
// plain, deterministic arithmetic (no fused multiply-add: this file is compiled with
// -ffp-contract=off), so the same floats give the same bytes on every machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

enum class WeightType { F32, F16, Q8_0, Q4_0, Q4_K };

struct WeightEncoding {
  WeightType type;
  const char* name;          // as a recipe writes it: "f16", "q8_0", "q4_0", "q4_k"
  uint32_t ggml_type;        // ggml_type / GGUF tensor type code
  uint32_t block;            // elements per block (a row's length must be a multiple)
  uint32_t block_bytes;      // bytes per block
  uint32_t file_type;        // llama_ftype for general.file_type when the matrices use it
};

// The encoding of a type.
const WeightEncoding& weight_encoding(WeightType type);
// A recipe's "weight_type" value: an error names the value and the valid ones.
Result<WeightType> parse_weight_type(const std::string& name);
// The valid recipe names, in order (f16 first).
std::vector<std::string> weight_type_names();

// Bytes of one row of n elements (n a multiple of the block).
uint64_t encoded_row_bytes(WeightType type, uint64_t n);

// Encodes n floats (n a multiple of the block) into `out` (encoded_row_bytes(type, n) bytes).
void encode_row(WeightType type, const float* x, uint64_t n, unsigned char* out);

// encode_row without the CPU's own f16 conversion: the bits it must equal (tests).
void encode_row_portable(WeightType type, const float* x, uint64_t n, unsigned char* out);

// Decodes what encode_row wrote (for tests and checks; ggml's dequantize_row_* in C++).
void decode_row(WeightType type, const unsigned char* in, uint64_t n, float* y);

// IEEE half from float, round to nearest even; and back.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace fp
