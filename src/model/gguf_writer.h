// A minimal GGUF (version 3) writer: metadata key/values and F32/F16 tensors, byte-for-byte
// deterministic. Enough to write the seeded random-weight llama models the tests run on.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "util/result.h"

namespace fp {

enum class GgufType : uint32_t { F32 = 0, F16 = 1 };

using GgufValue = std::variant<uint32_t, int32_t, float, bool, std::string, std::vector<std::string>,
                               std::vector<float>, std::vector<int32_t>>;

class GgufWriter {
 public:
  void add_kv(std::string key, GgufValue value);
  // dims are ggml's ne: ne[0] is the row length (the fastest-moving dimension).
  // data holds the element bytes already encoded in `type`.
  void add_tensor(std::string name, std::vector<uint64_t> dims, GgufType type, std::string data);
  // The whole file as bytes.
  std::string serialize() const;

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    GgufType type;
    std::string data;
  };
  std::vector<std::pair<std::string, GgufValue>> kvs_;
  std::vector<Tensor> tensors_;
};

// IEEE half from float, round to nearest even.
uint16_t float_to_half(float f);

}  // namespace fp
