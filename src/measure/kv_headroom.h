// Headroom: how much room is left beside a loaded runtime, and what it buys in context. The KV cache
// math from the model's attention shape and the cache types, checked against what the runtime says
// it allocated, and the memory measured free while it served the case:
//
//   bytes per token = layers x (row(K type, KV heads x K head size) + row(V type, KV heads x V head size))
//   row(type, n)    = n / elements per block x bytes per block   (ggml_row_size)
//   more tokens     = min over the devices holding the cache of  free(d) / (bytes per token x share(d))
//   context fit     = cells + more tokens
// where share(d) is the device's part of the runtime's KV buffers (all on one device: 1). The
// estimate leaves out what else grows with the context (the compute buffer, slightly): it says so.
// Pure: numbers in, numbers and sentences out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fp {

// The attention shape of a model as its KV cache sees it (model/gguf_reader.h ModelFacts).
struct KvShape {
  int layers = 0, kv_heads = 0, head_size_k = 0, head_size_v = 0;
};

// One cache type's cost: `bytes` per block of `elements` (ggml's blck_size, type_size).
struct KvTypeCost {
  std::string name;  // "f16", "q8_0"
  int elements = 1, bytes = 0;
};

// Bytes one token (one KV cell) takes over all layers, K and V; 0 when a row does not divide into
// whole blocks (the runtime would refuse that type for this head size).
uint64_t kv_bytes_per_token(const KvShape& shape, const KvTypeCost& k, const KvTypeCost& v);

// Memory measured free on one place that holds part of the cache, while the runtime served the case.
struct FreeOn {
  std::string device;      // the runtime's name for it: "CPU", "CUDA0"
  uint64_t free_bytes = 0;
  std::string source;      // "host MemAvailable", "NVML free memory of GPU 0 (NVIDIA H200)"
};

// Everything the headroom rests on.
struct HeadroomInput {
  KvShape shape;
  KvTypeCost k, v;
  long cells = 0;                          // KV cells the runtime allocated (its context)
  std::string cells_source;                // "the runtime's KV cache line", "shape.context"
  std::optional<double> runtime_kv_mib;    // what the runtime says its KV buffers total
  std::map<std::string, double> kv_mib_by_device;  // the runtime's KV buffer per device ("CPU", "CUDA0")
  std::vector<FreeOn> free;                // measured, per device that holds part of the cache
  std::optional<double> compute_mib;       // the runtime's compute buffers, total
};

struct Headroom {
  uint64_t bytes_per_token = 0;
  long cells = 0;                          // the context the runtime ran with (KV cells)
  std::string cells_source;
  double kv_mib = 0;                       // bytes per token x cells, in MiB
  std::string kv_check;                    // "agrees with the runtime's 32.00 MiB" / "DIFFERS: ..." / "not checked: ..."
  bool kv_agrees = false;                  // within 0.01 MiB of the runtime's own figure (it prints 2 decimals)
  std::vector<FreeOn> free;                // as measured
  long more_tokens = -1;                   // -1: not known (no free memory measured)
  long context_fit = -1;                   // cells + more_tokens
  std::string limited_by;                  // the device whose free memory runs out first
  std::optional<double> compute_mib;
  // The shape and types in words: "2 layers x 2 KV heads x head size 32, K f16, V f16".
  std::string shape_text;
  std::vector<std::string> notes;          // what the figures leave out, in words
};

// The headroom, or why there is none (a type without a known size, a shape of zeros, no cells).
struct HeadroomOutcome {
  std::optional<Headroom> headroom;
  std::string why_not;
};
HeadroomOutcome compute_headroom(const HeadroomInput& in);

// How many tokens of KV cache `mib` MiB hold at `bytes_per_token` (floor; 0 for a negative amount).
long tokens_in_mib(double mib, uint64_t bytes_per_token);

// A byte count in MiB with 3 decimals, the way result files write memory.
std::string mib_text(double mib);

}  // namespace fp
