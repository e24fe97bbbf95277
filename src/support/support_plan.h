// The questions `flashproof support` asks the backends, and their answers: shapes x K/V pairs x KV
// lengths x batches, one FLASH_ATTN_EXT node each, written for the ggml query helper
// (src/ggml_query/ggml_query_main.cpp) and read back from it. Pure: no process, no file.
#pragma once

#include <string>
#include <vector>

#include "runtime/kv_cache_types.h"
#include "support/attention_shape.h"
#include "util/result.h"

namespace fp {

// The tokens of one compute step: `tokens` queries, in `streams` KV streams (llama.cpp gives each
// slot its own stream when the slots do not share one KV buffer: a decode step of 4 slots is 4
// tokens in 4 streams).
struct StepBatch {
  int tokens = 1;
  int streams = 1;
  bool operator==(const StepBatch& o) const { return tokens == o.tokens && streams == o.streams; }
  // "1", "512", "4 (4 streams)".
  std::string label() const;
};

struct SupportQuery {
  size_t shape = 0;    // index into SupportPlan::shapes
  KvPair kv;           // the cache types as launched (-ctk / -ctv)
  KvPair node;         // the K/V types the node sees (an f32 cache is cast to f16 first)
  int kv_length = 0;   // cells attended per stream (the context, or its share per slot)
  StepBatch batch;
};

struct SupportPlan {
  std::vector<AttentionShape> shapes;
  std::vector<SupportQuery> queries;
  std::vector<std::string> notes;  // what was not asked and why (MLA's mixed pairs)
};

// Every shape x pair x length x batch, in that nesting order. A K-only cache (MLA) has one type: a
// mixed pair is asked with its K type and a note says so, duplicates dropped. `f32_cast_to` (the
// runtime data's support.f32_cast_to) is the type an f32 K or V reaches the node as; "" none.
SupportPlan plan_support(const std::vector<AttentionShape>& shapes, const std::vector<KvPair>& pairs,
                         const std::vector<int>& kv_lengths, const std::vector<StepBatch>& batches,
                         const std::string& f32_cast_to);

// `more`'s shapes and queries after `into`'s (its shape indices moved along), its notes too.
void append_plan(SupportPlan& into, const SupportPlan& more);

// The helper's queries file: one line per query, its index as the id.
std::string query_lines(const SupportPlan& plan);

struct DeviceInfo {
  int index = 0;
  std::string name;         // CPU, CUDA0, Vulkan0
  std::string backend;      // the backend's registry name: CPU, CUDA, Vulkan
  std::string type;         // cpu, gpu, igpu, accel
  std::string description;  // e.g. NVIDIA H200, llvmpipe (LLVM 15.0.6, 256 bits)
};

enum class Answer { Yes, No, Refused, Error, Missing };
const char* answer_name(Answer a);  // yes, no, refused, error, missing

struct SupportAnswers {
  std::string ggml_version, ggml_commit;
  std::vector<DeviceInfo> devices;
  std::vector<std::vector<Answer>> answers;  // [query][device]
  // [query][device]: the device takes the K and V cache tensors themselves (false: it cannot hold
  // the cache; llama.cpp aborts at start when the cache was allocated there). True when not said.
  std::vector<std::vector<bool>> cache_fits;
  std::vector<std::string> why;              // [query]: the refusal or error, else ""
  long long queries_us = -1;                 // the helper's own time for the queries; -1 unknown
  std::string fatal;                         // the helper could not ask (library, ABI)
};

// Parses the helper's answers file for a plan of `n_queries`; an error names the line that is not
// the helper's format. A query with no line is Missing (the helper died on it).
Result<SupportAnswers> parse_answers(const std::string& text, size_t n_queries, const std::string& path);

}  // namespace fp
