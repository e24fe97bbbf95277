// Runtime knowledge as data: the log lines, scheduler records and kernel names that tell whether a
// runtime's fused attention ran, loaded from src/runtime/data/<runtime>.json (key "evidence").
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/causes.h"
#include "evidence/instrument_rules.h"
#include "util/regex.h"
#include "util/result.h"

namespace fp {

// What a matching record or kernel name tells. Which kinds a section allows: see kLogKinds etc.
enum class RuleKind {
  // section "log" (level 1)
  Requested,      // what was requested; capture "state" mapped through "states" (null: auto)
  Decision,       // what the runtime chose: "fused" constant or "state" through "states";
                  // optional captures "backend", "reason"
  Reason,         // a line explaining a fallback; optional capture "backend"
  Fatal,          // the runtime refused to start for want of fused attention
  Note,           // quoted for the reader, decides nothing (e.g. a deprecation warning); optional "backend"
  KvTokens,       // capture "value": KV cache capacity in tokens (digits, thousands separators allowed)
  GraphSplits,    // capture "value", optional "batch"
  GraphNodes,     // capture "value"
  KvBuffer,       // captures "device", "mib"
  KvTotal,        // capture "mib"; optional "cells", "streams", "k_type", "k_mib", "v_type", "v_mib"
  ComputeBuffer,  // captures "device", "mib"
  Degraded,       // the fused path runs on data the runtime converts first, by its own word: captures
                  // "k_type", "v_type" (the pair it has no kernel for); optional "to_type"; keys
                  // "cause" and "remedy" (templates: {k_type} {v_type} {to_type} {compiled_pairs})
  CompiledPairs,  // the K/V pairs the build compiled fused kernels for: optional captures "pairs"
                  // (a comma-separated list of K-V pairs) and "all" (every pair compiled)
  GpuArchs,       // the GPU architectures the build compiled for: capture "archs"
  // section "placement" (level 2)
  FusedNode,      // capture "backend"; optional "index", "op", "name"
  UnfusedNode,    // capture "backend"; optional "index", "op", "name"
  Split,          // capture "index"; optional "backend"
  Device,         // a backend of the run by its whole name (the device list a runtime prints at start):
                  // capture "name"; optional "description"
  // section "kernels" (level 3), matched against a demangled kernel name
  FusedKernel,       // optional captures "k_type", "v_type": the K/V types the kernel reads, named
                     // through the rule's "type_names" (ggml's "(ggml_type)1" -> f16)
  UnfusedKernel,
  ConversionKernel,  // converts the KV cache for the fused kernel (dequantize to f16); optional
                     // capture "type" (the type converted from). Counted apart: not attention.
};

// The data file's spelling of a kind ("requested", "fused_node", ...).
std::string to_string(RuleKind kind);

// One pattern with its name, where it was seen and the sample lines that prove it.
struct Rule {
  std::string name;
  RuleKind kind = RuleKind::Requested;
  std::string pattern;
  Regex regex;
  std::map<std::string, int> captures;    // role -> group index
  std::optional<bool> fused;              // Decision: constant answer
  std::map<std::string, std::optional<bool>> states;  // captured "state" -> fused (null: undecided)
  double scale_to_mib = 1.0;              // multiplies captured sizes ("mib", "k_mib", "v_mib")
  std::string backend;                    // kernel rules: the attention backend the kernel belongs to ("" any)
  std::string family;                     // kernel rules: the kernel family (fattn-mma, FA3, ...); "" none
  bool device_timings = false;            // kernel rules: matches op names of device_timings (key "source":
                                          // "device_timings"), not the probe's kernel names
  int name_width = 0;                     // node rules: the backend name is printed cut to this many
                                          // characters (ggml's "%5.5s"); 0: printed whole
  std::map<std::string, std::string> type_names;  // fused kernel rules: captured type -> type name
  std::string reads_kv;                           // fused kernel rules without type captures: the K/V pair the
                                                  // kernel always reads ("f16-f16": ggml-cuda's mma and tile kernels)
  std::string cause, remedy;              // degraded rules: templates, {capture or fact} filled in
  std::string comment;
  std::vector<std::string> examples;
  std::vector<std::string> counter_examples;
};

// Key "device_timings": a GPU backend's own per-op timings, measured with the device's timestamp
// queries and printed into the log when the runtime runs with `env` (ggml-vulkan's
// GGML_VK_PERF_LOGGER): level 3 where the CUPTI probe sees nothing (evidence/device_timings.h).
struct DeviceTimings {
  std::map<std::string, std::string> env;  // added to the evidence pass's environment
  Rule block;    // the line that opens one graph's timings ("Vulkan Timings:")
  Rule end;      // the line that closes it ("Total time: ...")
  Rule op;       // one op: captures "name", "count" (dispatches) and "total_us"
  Rule devices;  // capture "count": how many devices the backend found (one: the timings are device 0's)
  Rule backend;  // the backend names the timings are for, group 1 the device number ("Vulkan0")
  std::string backend_format;  // the backend name of a device, "Vulkan{device}"
  std::string comment;
};

// Key "degraded_kernels": the fused path on converted data that only the kernels show, for a model
// whose head size the build's vector kernel (the one fused kernel that reads quantized K/V) has no
// version for: the kernels that ran read `reads_kv`, converted from the quantized cache every step.
struct KernelDegradation {
  std::vector<int> vector_head_sizes;  // the head sizes the vector kernel is compiled for
  std::string cause, remedy;           // templates: {head_size} {k_type} {v_type} {to_type} {compiled_pairs}
  std::string comment;
};

// Everything one runtime's data file says about evidence.
struct RuntimeSignatures {
  std::string runtime;                    // file stem, e.g. "llama-server"
  std::string source;                     // path of the data file
  std::optional<Rule> record_prefix;      // start of one log record (timestamp); none: a record is a line
  std::optional<Rule> process_prefix;     // a line's process label, capture 1 (vLLM "(EngineCore_DP0 pid=7) ");
                                          // none: one process
  // Key "gpu_backend": matches a backend name that is a GPU, group 1 its device number as the
  // kernel probe records it (llama.cpp "CUDA1" -> 1). None: kernels are not compared per device.
  std::optional<Rule> gpu_backend;
  std::string gpu_backend_format;         // its "name_format": the backend name of a device, "CUDA{device}"
  // The backend name of GPU `device` ("CUDA1"), "" when the runtime data has no gpu_backend.
  std::string gpu_backend_name(int device) const;
  std::vector<Rule> log;                  // level 1
  std::vector<Rule> placement;            // level 2; empty when the runtime has none
  std::vector<Rule> kernels;              // level 3 (the probe's kernel names, and device_timings' op names)
  std::optional<DeviceTimings> device_timings;
  CauseRules causes;                      // key "causes": known causes of a fallback (evidence/causes.h)
  std::optional<KernelDegradation> degraded_kernels;  // key "degraded_kernels"; none: kernels alone say it by type only
  // Key "instruments": the runtime's last words and the instruments known to break a configuration
  // (evidence/instrument_rules.h).
  InstrumentRules instruments;
  std::map<std::string, std::string> hints;  // "log"/"placement"/"kernels" -> how to get that level
  // Key "attention_backends": when present, an expected backend names an attention backend
  // (vLLM: FLASH_ATTN, FLASHINFER, ...), not a device, and captured backend texts are mapped to
  // these names through `backend_aliases` (e.g. "Flash Attention" -> FLASH_ATTN).
  std::vector<std::string> attention_backends;
  std::map<std::string, std::string> backend_aliases;

  bool names_attention_backends() const { return !attention_backends.empty(); }
  // The canonical name of a captured backend text: an alias, else the text without an enum class
  // prefix ("AttentionBackendEnum.FLASH_ATTN" -> FLASH_ATTN), else the text.
  std::string canonical_backend(const std::string& text) const;
};

// Loads another runtime's signatures, for a data file whose evidence is "same_as" another's
// (runtime/runtime_data.h supplies it: this part never opens a file).
using SignaturesLoader = std::function<Result<RuntimeSignatures>(const std::string& runtime)>;

// Parses and validates a runtime data file's "evidence" (path only names it in errors; runtime is the
// file stem). Without a loader, "same_as" is an error.
Result<RuntimeSignatures> parse_runtime_signatures(const std::string& json_text, const std::string& path,
                                                   const std::string& runtime,
                                                   const SignaturesLoader& load_same_as = nullptr);

// Searches the whole text with the rule (util/regex.h: records of any length are read whole).
bool rule_search(const Rule& rule, std::string_view text, RegexMatch& match);
// Text of the capture with that role, "" when the rule has no such role or the group did not match.
std::string capture(const Rule& rule, const RegexMatch& match, const std::string& role);

}  // namespace fp
