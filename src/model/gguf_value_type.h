// The value types of GGUF metadata (the GGUF specification's gguf_metadata_value_type), shared by
// the reader and the writer of model files.
#pragma once

#include <cstdint>

namespace fp::gguf {

// A metadata value's type code as the file stores it (a uint32).
enum ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

}  // namespace fp::gguf
