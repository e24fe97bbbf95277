// A GGUF (version 3) writer: metadata key/values and tensors, byte-for-byte deterministic. Tensor
// data is produced in chunks of rows by a fill function, on several threads, and written in order,
// so a model of any size is written in bounded memory (kMaxBytesInFlight) and the file's bytes do not
// depend on the number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/weight_encoding.h"
#include "util/result.h"

namespace fp {

using GgufValue = std::variant<uint32_t, int32_t, float, bool, std::string, std::vector<std::string>,
                               std::vector<float>, std::vector<int32_t>>;

// Encoded bytes of rows [begin, end) of a tensor (a row is dims[0] elements), into `out`.
using GgufRowFill = std::function<void(uint64_t begin, uint64_t end, unsigned char* out)>;

// Tensor bytes held by the workers at once, at most (chunks of about kChunkBytes).
inline constexpr uint64_t kChunkBytes = 4ull << 20;
inline constexpr uint64_t kMaxBytesInFlight = 128ull << 20;

class GgufWriter {
 public:
  void add_kv(std::string key, GgufValue value);
  // dims are ggml's ne: ne[0] is the row length (the fastest-moving dimension), a multiple of the
  // type's block.
  void add_tensor(std::string name, std::vector<uint64_t> dims, WeightType type, GgufRowFill fill);
  // A tensor whose bytes are already encoded (small tensors, tests).
  void add_tensor(std::string name, std::vector<uint64_t> dims, WeightType type, std::string data);

  uint64_t file_size() const;
  // Streams the file to `sink` in order (header, metadata, tensor infos, aligned tensor data), the
  // tensors filled by `threads` workers. Stops at the first false from the sink and returns false.
  bool write(const std::function<bool(std::string_view)>& sink, unsigned threads) const;
  // The whole file as bytes (small models, tests).
  std::string serialize() const;

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    WeightType type;
    GgufRowFill fill;
    uint64_t rows() const;
    uint64_t row_bytes() const;
    uint64_t bytes() const { return rows() * row_bytes(); }
  };
  std::string header() const;
  std::vector<std::pair<std::string, GgufValue>> kvs_;
  std::vector<Tensor> tensors_;
};

}  // namespace fp
