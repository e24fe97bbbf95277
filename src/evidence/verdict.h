// The verdict: combines every evidence level available into one answer to "is the fused attention
// really running where it should?", says which levels were used and why others were not, quotes the
// lines and kernels relied on, and flags levels that disagree.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/kernel_tally.h"
#include "evidence/log_scan.h"
#include "evidence/placement.h"
#include "evidence/verdict_types.h"

namespace fp {

// What one level says.
struct LevelFinding {
  int level = 0;                // 1 log, 2 placement, 3 kernels
  std::string name;             // "log", "placement", "kernels"
  bool used = false;            // the level gave an answer
  std::optional<bool> active;   // fused op fully on the expected backend (when used)
  std::optional<bool> any_on_expected;  // some fused work on the expected backend (when used)
  bool partial = false;         // fused op split between the expected backend and others
  std::string summary;          // "156 of 156 FLASH_ATTN nodes on CUDA0"
  std::string unavailable_why;  // when !used
  std::vector<std::string> quotes;
};

// The evidence levels by name, in order: "log", "placement", "kernels".
const std::vector<std::string>& evidence_level_names();
// The levels a platform can produce: the log; placement when the runtime's data has placement
// rules; kernels when the kernel probe is attached to a run on the GPU. The default of a case's
// expect.evidence (flow/passes/evidence_pass.cpp; a GPU box always adds kernels to a GPU case).
std::vector<std::string> default_evidence_levels(const RuntimeSignatures& sigs, bool probe_attached);

// The word an expectation uses for "every GPU this machine has" (case expect.backend, explain
// --expect-backend).
inline constexpr const char* kAllGpus = "all-gpus";

struct VerdictInput {
  const LogScan* log = nullptr;            // null: no log
  const Placement* placement = nullptr;    // null: no placement scan
  const KernelSummary* kernels = nullptr;  // null: no tally given
  // Backends the fused op must run on, comma-separated ("CUDA0,CUDA1"): active means on each of
  // them and nowhere else. "all-gpus": every entry of `gpu_backends` (else every GPU backend the log
  // names). "" : the only device holding the KV cache, if any.
  std::string expect_backend;
  std::vector<std::string> gpu_backends;   // the machine's GPUs as backend names (CUDA0, ...), for all-gpus
  // Levels that must yield an answer (evidence_level_names()); one that yields nothing makes the
  // verdict "no evidence". Empty: none required (the log alone still never proves "active").
  std::vector<std::string> required;
  // The model's attention layers (GGUF block_count), for level 2's completeness check; 0: unknown,
  // the check is not made and the verdict says so. layers_from names the source.
  int model_layers = 0;
  std::string layers_from;
  std::map<std::string, std::string> hints;  // RuntimeSignatures::hints, for "unavailable" texts
  // Levels whose instrument was taken off (flow/passes/instruments.h): level name -> why. Such a level,
  // when it yields nothing, is unavailable with this reason instead of its own.
  std::map<std::string, std::string> taken_off;
  // RuntimeSignatures::attention_backends: when not empty, expect_backend names an attention
  // backend (vLLM FLASH_ATTN, ...): level 1 compares the backend each process decided, and level 3
  // the kernels of that backend. Empty: expect_backend is a device (llama.cpp CUDA0, CPU).
  std::vector<std::string> attention_backends;
  // RuntimeSignatures::gpu_backend: the pattern whose group 1 turns a GPU backend name into the
  // device number the kernel probe records (CUDA1 -> 1); empty: kernels are not compared per device.
  std::string gpu_backend_pattern;
  // The runtime data's words for a degradation the kernels show without the runtime's line (its
  // first rule of kind degraded): templates of cause and remedy. Empty: kernels alone never say it.
  std::string degraded_cause, degraded_remedy;
  // RuntimeSignatures::degraded_kernels, and the model's K head size it is judged by (GGUF; 0 unknown:
  // the kernels alone never say a head size lacks the vector kernel).
  std::optional<KernelDegradation> degraded_kernels;
  int head_size = 0;
};

// A VerdictInput with the runtime's hints, attention backends and GPU backend pattern filled in.
VerdictInput verdict_input(const RuntimeSignatures& sigs);

struct Verdict {
  Activity activity = Activity::NoEvidence;
  std::string expected_backend;       // "" when neither given nor inferable
  std::string expected_from;          // "given", "KV cache device", ""
  std::vector<std::string> expected_backends;  // expected_backend as a list
  std::vector<std::string> missing_backends;   // expected backends that ran none of the fused op (level 2)
  bool names_attention_backend = false;  // expected_backend is an attention backend, not a device
  std::map<std::string, std::vector<std::string>> backends_by_process;  // level 1, backend mode
  std::map<std::string, int> fused_backends;  // placement: backend -> fused nodes
  std::map<std::string, long long> fused_kernels_by_backend;  // level 3 per GPU ("device ?" when the tally has no device)
  std::vector<std::string> missing_required;  // "level 2 placement (required): no node records; ..."
  std::string placement_completeness;         // checked against the model's layers, or why not
  std::string backend_names;                  // how cut backend names were read (Placement::names_text)
  std::vector<LevelFinding> levels;   // always levels 1, 2, 3 in order
  std::vector<int> levels_used;
  std::vector<std::string> levels_unavailable;  // "level 3 kernels: no tally given (...)"
  std::vector<std::string> quotes;    // everything relied on, level by level
  bool disagreement = false;
  std::string disagreement_detail;    // both sides quoted (levels, or processes of one log)
  // The disagreement is more than the log's word against the measured levels (a silent fallback):
  // placement against kernels, per GPU, or processes of one log that decided differently.
  bool measured_disagreement = false;
  bool silent_fallback = false;       // log says enabled; placement or kernels say not on the expected backend
  bool partial_offload = false;       // fused op partly on the expected backend, partly elsewhere
  std::optional<Degradation> degraded;  // active, but on data the runtime converted first
  std::string explanation;            // one paragraph for a person
};

Verdict decide(const VerdictInput& in);

// Whether the verdict is what was expected: fused attention active (expect_fused) or not active,
// and never when the levels disagree or there is no evidence. The one rule run, ab, gate and
// explain share.
bool verdict_as_expected(const Verdict& v, bool expect_fused);
bool verdict_as_expected(Activity activity, bool disagreement, bool expect_fused);

// A case's expectation on degradation (expect.degraded) against the verdict: "" when it holds (or
// the case says nothing), else why not ("the runtime converts K/V q5_1-q5_1 to f16 ...").
std::string degradation_unexpected(const std::optional<Degradation>& d, std::optional<bool> expect_degraded);

// "active, degraded: <cause> (the runtime, line N: "<its line>")": what the explanation says.
std::string degradation_summary(const Degradation& d);

// Evidence lost: every level that answered before (`before`, level names as evidence_level_names())
// and is silent now (`now`), one line each: "EVIDENCE LOST: level 2 (placement) gave evidence
// <before_what> and none <now_what>: <why, from now_unavailable>". A changed log format or a probe
// that a new build refuses loses a level even when the verdict still reads the same. The one rule of
// the gate against goldens, the side-by-side gate and a run against its golden.
std::vector<std::string> evidence_lost(const std::vector<std::string>& before, const std::vector<std::string>& now,
                                       const std::vector<std::string>& now_unavailable, const std::string& before_what,
                                       const std::string& now_what);

// Whether the fused op ran on other devices in `after` than in `before` (the set of backends, not
// the node counts: a batch job's graph holds more or fewer FLASH_ATTN nodes from one launch to the
// next as its requests are batched, 36 or 40 on the same build: measured on batch-tiny).
bool fused_devices_differ(const std::map<std::string, int>& before, const std::map<std::string, int>& after);
// What the verdict knows for the cause rules (evidence/causes.h): expected_backend, and placed_on,
// the backends placement found the fused op on, comma-separated ("CUDA0,CUDA1").
std::map<std::string, std::string> verdict_facts(const Verdict& v);

// Multi-line text of the verdict with its evidence, for `flashproof explain` and reports.
std::string format_verdict(const Verdict& v);

}  // namespace fp
