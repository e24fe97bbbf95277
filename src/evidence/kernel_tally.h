// Level 3: what the GPU executed, from a kernel tally written by the CUPTI probe: one line per
// kernel and device, launches<TAB>total_gpu_ns<TAB>device<TAB>demangled name (probe v2), or
// launches<TAB>total_gpu_ns<TAB>demangled name (v1 and older tallies: the device is not known).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/runtime_signatures.h"
#include "util/result.h"

namespace fp {

struct KernelLine {
  long long launches = 0;
  long long gpu_ns = 0;
  std::string name;
  int device = -1;     // CUDA device ordinal the kernel ran on (CUPTI deviceId); -1: not recorded
  size_t line = 0;
};

struct KernelTally {
  std::string source;  // file the tally came from ("a.tsv + b.tsv" when merged)
  std::vector<KernelLine> kernels;
  std::string status;  // the probe header's status=ok|refused|failed; "" without a header
  std::string reason;  // the header's reason=..., for refused or failed
  size_t processes = 1;  // processes whose tallies it holds (merge_kernel_tallies)
  bool device_timings = false;  // op names from a backend's own timings (evidence/device_timings.h),
                                // classified by the kernel rules with source "device_timings" only
};

// Parses tally text; blank lines and lines starting with '#' are skipped. A malformed line is an
// error naming source, line number, the line and the expected form.
Result<KernelTally> parse_kernel_tally(std::string_view text, const std::string& source);
// Reads and parses a tally file (plain or gzipped).
Result<KernelTally> read_kernel_tally(const std::string& path);

// Runtimes with several CUDA processes (vLLM's engine core runs in a child of the API server): the
// probe writes one tally per process when its path holds "%p" (replaced by the process id). The
// pattern for a tally `path`: "dir/kernels.tsv" -> "dir/kernels.%p.tsv".
std::string per_process_tally_pattern(const std::string& path);
// Every process's tally written for `path` (the files per_process_tally_pattern names, one per
// process id), merged; without any, `path` itself (one file: older probes and recordings). An error
// when neither exists or a file is malformed.
Result<KernelTally> read_process_tallies(const std::string& path);
// Lines of the same device and kernel name add up. Status "ok" when any process's is (a process
// that ran no CUDA, like vLLM's API server, may leave an empty tally); else the first status, and
// the reasons of the processes that are not ok, each with its file.
KernelTally merge_kernel_tallies(const std::vector<KernelTally>& tallies);
// The tally as text in the probe's format (v2: a device column; -1 for an unknown device), with a
// header that says how many processes it merges: what kernels.tsv holds beside the per-process files.
std::string kernel_tally_text(const KernelTally& tally);

// Attention kernels of one family (a kernel rule's "family" in the runtime data: fattn-mma, FA3, ...).
struct KernelFamilyTally {
  bool fused = true;
  long long launches = 0, gpu_ns = 0;
};
// The family of attention kernels whose rule names none.
inline constexpr const char* kOtherFusedFamily = "other-fused";
inline constexpr const char* kOtherUnfusedFamily = "other-unfused";

// The tally classified with the runtime's kernel rules.
struct KernelSummary {
  std::string source;
  size_t processes = 1;  // processes whose tallies were merged (KernelTally::processes)
  size_t records = 0;  // kernel lines in the tally; 0 is no evidence, never a pass
  long long fused_launches = 0, fused_ns = 0;
  long long unfused_launches = 0, unfused_ns = 0;
  long long total_launches = 0, total_ns = 0;
  std::vector<std::string> top_fused;    // up to 3 names, most GPU time first
  std::vector<std::string> top_unfused;
  std::vector<std::string> fused_names, unfused_names;  // every distinct attention kernel name, sorted
  std::vector<std::string> fused_patterns;  // what was looked for: each fused rule's family, else its pattern
  // Kernel rules that name an attention backend (key "backend"): launches and top names per backend,
  // and the backends some rule names (even when none of their kernels ran).
  std::map<std::string, long long> launches_by_backend;
  std::map<std::string, std::vector<std::string>> top_by_backend;
  std::vector<std::string> backends_with_patterns;
  // Per CUDA device: fused attention launches (-1: lines without a device column).
  std::map<int, long long> fused_launches_by_device;
  // Attention kernels by family (evidence/kernel_set.h family_shares turns them into shares).
  std::map<std::string, KernelFamilyTally> families;
  // Kernels that convert the KV cache for the fused ones (rules of kind conversion_kernel), counted
  // apart from attention: launches, GPU time, up to 3 names (most GPU time first), the types converted.
  long long conversion_launches = 0, conversion_ns = 0;
  std::vector<std::string> top_conversion;
  std::vector<std::string> conversion_types;
  std::map<std::string, long long> conversion_ns_by_type;  // "" for kernels whose rule captures no type
  // The K/V types the fused kernels read ("f16-f16"), from rules that capture them, distinct.
  std::vector<std::string> fused_kv_types;
  // The K/V pairs fused kernels of no captured type always read (a rule's "reads_kv": ggml-cuda's mma
  // and tile kernels read f16), distinct.
  std::vector<std::string> fused_reads_kv;
  bool devices_known = false;  // every kernel line names its device
  std::string status, reason;  // from the tally header

  bool has_records() const { return records > 0; }
  // Fused plus unfused attention GPU time over all GPU time (0 when no time).
  double attention_share() const;
  // Conversion kernels' GPU time over all GPU time (0 when no time).
  double conversion_share() const;
};

KernelSummary classify_kernels(const KernelTally& tally, const RuntimeSignatures& sigs);

}  // namespace fp
