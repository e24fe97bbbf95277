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
#include <utility>
#include <vector>

namespace fp {

inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;

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

// Several models on one card (measure/shared_card.h): who else holds memory where the cache lives,
// the servers the case names as its neighbours, and whether its deployed context fits beside them.

// A process other than the runtime flashproof launched, holding memory where the cache lives.
struct OtherProcess {
  unsigned pid = 0;
  std::string command;         // /proc/PID/comm ("llama-server"); "" where /proc does not show the pid
  std::string command_line;    // its arguments joined by spaces: what a neighbour's "match" is looked for in; never reported
  std::optional<double> mib;   // what it holds there (NVML per process; the host: VmRSS); none where not known
  std::string neighbour;       // the case's neighbour it was taken for; "" none
};

// The other processes on one place that holds part of the cache.
struct OthersOn {
  std::string device;    // the runtime's name for it: "CUDA0", "CPU"
  std::string where;     // "GPU 0 (NVIDIA H100 80GB HBM3)", "the host"
  bool listed = false;   // every process on it was listed (a GPU, through NVML)
  std::string why_not;   // not listed: why (the host; NVML's error)
  std::vector<OtherProcess> processes;  // listed: all of them; the host: those matching a neighbour
};

// A server the case names as sharing its card (case "headroom.neighbours").
struct Neighbour {
  std::string name;      // the case's name for it ("embedder")
  std::string match;     // looked for in a process's command name (equal) or command line (contained)
  std::string device;    // where its memory is: "CUDA0", "CPU"
  double mib = 0;        // the memory it holds when serving
};

enum class NeighbourState {
  Running,     // a process on its device matches: its memory is already out of the memory left
  NotRunning,  // none does: its memory is reserved from the memory left
  Elsewhere,   // its device holds none of the case's KV cache: it changes nothing here
};

struct NeighbourOutcome {
  Neighbour declared;
  NeighbourState state = NeighbourState::NotRunning;
  std::vector<OtherProcess> processes;  // running: the processes taken for it
  std::optional<double> used_mib;       // running: what they hold; none where not known
  double reserved_mib = 0;              // taken from the memory left: all of it when not running, the rest
                                        // up to the declared memory when running with less
  std::string looked;                   // where it was looked for, or why it could not be
};

// The context the case deploys against the context that fits beside everything else. Typed: a
// deployed context that does not fit fails `flashproof run`.
struct DeployedFit {
  long deployed = 0;
  std::string deployed_source;  // "headroom.deployed_context", or the cells' source when the case names none
  bool checked = false;
  std::string not_checked;      // why not
  long fits = 0;                // cells + the tokens the memory left, less the reservations, holds (< cells when they take more)
  long short_by = 0;            // deployed - fits, when positive
  uint64_t bytes_per_token = 0;
  double reserved_mib = 0;      // the reservations on the places that hold the cache
  std::string limited_by;       // the place that runs out first
  std::string beside;           // who shares it, in words
  bool fits_ok() const { return checked && short_by <= 0; }
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
  // Beside the runtime (measure/shared_card.h share_card): the other processes per place holding the
  // cache, the case's neighbours, and the deployed context to check (check_deployed: the case has a
  // "headroom" block; deployed_context 0: the cells it ran with).
  std::vector<OthersOn> others;
  std::vector<Neighbour> neighbours;
  bool check_deployed = false;
  long deployed_context = 0;
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
  std::vector<OthersOn> others;             // what else holds memory where the cache lives
  std::vector<NeighbourOutcome> neighbours; // the case's neighbours, each running or reserved
  std::optional<DeployedFit> deployed;      // the case's deployed context (a "headroom" block only)
};

// The headroom, or why there is none (a type without a known size, a shape of zeros, no cells).
struct HeadroomOutcome {
  std::optional<Headroom> headroom;
  std::string why_not;
};
HeadroomOutcome compute_headroom(const HeadroomInput& in);

// Tokens of KV cache the memory left on each place holds, each place paying its share of a token
// (its part of `kv_mib_by_device`; all of it where the runtime named one place or none); the first to
// run out decides (`limited_by`). Negative where a place has less than nothing left (reservations).
// None when no place takes a share.
struct TokensFit {
  long tokens = 0;
  std::string limited_by;
};
std::optional<TokensFit> tokens_fit(const std::vector<std::pair<std::string, int64_t>>& left_bytes,
                                    const std::map<std::string, double>& kv_mib_by_device, uint64_t bytes_per_token);

// How many tokens of KV cache `mib` MiB hold at `bytes_per_token` (floor; 0 for a negative amount).
long tokens_in_mib(double mib, uint64_t bytes_per_token);

// A byte count in MiB with 3 decimals, the way result files write memory.
std::string mib_text(double mib);

}  // namespace fp
