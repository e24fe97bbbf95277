// A small GGUF metadata reader: the header's key/values (not the tensors), enough to know a model's
// attention shape: layer count (`<arch>.block_count`), heads and head size. Reads only the front of
// the file, however large the model; a truncated or malformed file is an error naming the byte.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace fp {

// One metadata value. Numbers and booleans land in `number` (and `integer` when whole); strings in
// `text`; arrays keep their element count only.
struct GgufMetaValue {
  uint32_t type = 0;             // GGUF value type (4 UINT32, 8 STRING, 9 ARRAY, ...)
  std::optional<int64_t> integer;
  std::optional<double> number;
  std::optional<std::string> text;
  uint64_t array_count = 0;      // type ARRAY
  uint64_t longest_string = 0;   // an ARRAY of strings: the longest element's bytes
};

struct GgufMetadata {
  std::string source;            // file the header came from
  uint32_t version = 0;
  uint64_t tensor_count = 0;
  std::map<std::string, GgufMetaValue> values;

  std::optional<int64_t> integer(const std::string& key) const;
  std::optional<std::string> text(const std::string& key) const;
};

// Parses the header from bytes (the file's start; the tensors need not be there).
Result<GgufMetadata> parse_gguf_metadata(std::string_view bytes, const std::string& source);
// Reads the header of a .gguf file, reading no further than the metadata.
Result<GgufMetadata> read_gguf_metadata(const std::string& path);

// What the evidence and the cause rules need of a model.
struct ModelFacts {
  std::string source;
  std::string architecture;      // general.architecture, e.g. llama
  int layers = 0;                // <arch>.block_count: the attention layers (one attention op each)
  int n_embd = 0, n_head = 0, n_head_kv = 0;
  int head_size_k = 0, head_size_v = 0;  // <arch>.attention.key_length / value_length, else n_embd / n_head
  int trained_context = 0;       // <arch>.context_length; 0 when the header does not say
  int file_type = -1;            // general.file_type (llama_ftype: 1 mostly F16, 7 Q8_0, 2 Q4_0, 15 Q4_K_M, ...); -1 unstated
  int gqa_ratio() const { return n_head_kv > 0 ? n_head / n_head_kv : 0; }
  size_t longest_token_bytes = 0;  // the longest text of tokenizer.ggml.tokens; 0 when there is no vocabulary
};

// llama_ftype as its short name ("f16", "q8_0", "q4_0", "q4_k_m", ...); "ftype N" for others.
std::string file_type_name(int file_type);

// The facts from a header; an error names the missing key and the file.
Result<ModelFacts> model_facts(const GgufMetadata& meta);
// read_gguf_metadata, then model_facts.
Result<ModelFacts> read_model_facts(const std::string& path);

}  // namespace fp
