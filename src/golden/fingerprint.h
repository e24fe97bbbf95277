// What identifies the system under test. Goldens live in golden/<id>/, where the id is readable
// (cpu model and cores, or gpu and driver when NVML sees one; runtime and its build, e.g.
// "intel-r-xeon-r-processor-2c-llama-server-b11669" or "nvidia-h200-580.159.04-llama-server-b7000").
//
// The id names the machine and runtime build; the full fingerprint adds what one case launched
// (model file sha256, launch command template) and is stored beside the goldens:
//   golden/<id>/fingerprint.json          the machine part (written with the first golden)
//   golden/<id>/<case>/fingerprint.json   the full fingerprint the case's golden was recorded from
// and in every result (result.json key "fingerprint_detail").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

struct Fingerprint {
  // Machine
  std::string cpu_model;
  unsigned cores = 0;
  std::string gpu_name, gpu_driver, cuda_version;  // empty without NVML (gpu_name: GPU 0; "N x name" for several)
  // Said, not part of the id: which GPU(s) exactly (NVML UUIDs, comma-joined) and the OS kernel
  // (uname -r). A change is named only when both sides know the field (older files lack them).
  std::string gpu_uuid, os_kernel;
  // Runtime
  std::string runtime, runtime_version, runtime_build;  // adapter name, `--version` text, build id (build_regex)
  std::string runtime_build_log;                         // the build id the runtime's own log states; empty: not stated
  // What the build says it compiled, from its own log (llama.cpp's system_info), known after the
  // evidence pass: the K/V pairs with fused kernels ("q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16", "all"
  // for every pair) and the GPU architectures ("500,610,...,900"); empty: not stated.
  std::string runtime_fa_pairs, runtime_gpu_archs;
  // Case (empty in the machine part)
  std::string model_sha256;
  std::string launch;  // the case's launch argv template, space-joined (placeholders unexpanded: stable)
  std::string flashproof_version = FLASHPROOF_VERSION;

  // Readable folder name: hardware, runtime, "b" + build (the version text when there is no build).
  std::string id() const;
  // Every field above plus "id", in a fixed order (so the file diffs cleanly).
  nlohmann::ordered_json to_json() const;
  // The same without the case fields (model_sha256, launch).
  nlohmann::ordered_json machine_json() const;
};

// Reads a fingerprint written by to_json (or machine_json). Unknown keys are rejected, missing
// string keys are empty; a wrong type is an error naming `origin` and the field.
Result<Fingerprint> fingerprint_from_json(const nlohmann::json& j, const std::string& origin);
// The same from a file; errors name the file (truncated or corrupt JSON included).
Result<Fingerprint> load_fingerprint(const std::string& path);

// One field that differs between two fingerprints.
struct FieldChange {
  std::string field;  // the JSON key, e.g. "runtime_build"
  std::string before, after;
};
// Every field that differs, in the to_json order ("id" excluded). Case fields that are empty on
// either side (a machine-part fingerprint) are not compared.
std::vector<FieldChange> fingerprint_changes(const Fingerprint& before, const Fingerprint& after);
// "  runtime_build: 11000 -> 11669\n" per change, or "  (no change)\n".
std::string describe_changes(const std::vector<FieldChange>& changes, const std::string& indent = "  ");

// The K/V pairs a fingerprint's runtime_fa_pairs names ("all": every pair), and the pairs that
// differ between two of them: what the new build compiles that the old did not, and what it no
// longer compiles.
struct FaPairChange {
  std::vector<std::string> added, removed;
  bool all_before = false, all_after = false;
  bool any() const { return !added.empty() || !removed.empty() || all_before != all_after; }
};
FaPairChange fa_pair_change(const std::string& before, const std::string& after);
// Whether K/V `pair` ("q5_1-q5_1") has fused kernels in a build whose runtime_fa_pairs is `pairs`.
bool fa_pair_compiled(const std::string& pairs, const std::string& pair);

// Same CPU model, core count and GPU: goldens of one are a fair baseline for the other.
bool same_hardware(const Fingerprint& a, const Fingerprint& b);

// CPU model and cores of this machine (/proc/cpuinfo); GPU name, driver and CUDA version from
// NVML when a driver is present (empty otherwise).
Fingerprint machine_fingerprint();

// The build id `build` as the runtime's log states it: a record saying "build <build>" or
// "build: <build>" (optionally "b<build>") within the first `limit` bytes of the log. Returns the
// stated build, another build id the log states instead, or "" when the log names none.
std::string build_stated_in_log(const std::string& log_text, size_t limit = 1 << 20);

// Lowercase, runs of anything but [a-z0-9.] become one '-', trimmed of '-'.
std::string slug(const std::string& s);

}  // namespace fp
