// The attention kernels a run executed, as sets of names: the signal that ties a quiet, timed
// configuration to the evidence pass on a GPU (flow/passes/probed_check.h). Same request, same runtime,
// same machine: a different set means the timed runs ran a different attention path.
#pragma once

#include <string>
#include <vector>

#include "evidence/kernel_tally.h"

namespace fp {

struct AttentionKernelSet {
  size_t records = 0;                 // kernel lines in the tally (0: the probe saw nothing)
  std::vector<std::string> fused;     // distinct names, sorted
  std::vector<std::string> unfused;
};

AttentionKernelSet attention_kernel_set(const KernelSummary& s);

// A kernel name as people read it: no leading "void ", no parameter list, template arguments kept
// ("flash_attn_ext_f16<128, 128, 16, 4, false, false>").
std::string kernel_display_name(const std::string& demangled);

// "fused: flash_attn_ext_vec<...>, flash_attn_ext_f16<...>; unfused: none" (names shortened).
std::string kernel_set_text(const AttentionKernelSet& s);

// One attention kernel family (the runtime data's kernel rules name them: fattn-mma, fattn-vec, FA3,
// ...) and its share of the attention GPU time (fused plus unfused attention kernels).
struct FamilyShare {
  std::string family;
  bool fused = true;
  double share = 0;        // 0..1
  long long launches = 0;
};
// Every family that ran, largest share first; empty when no attention kernel ran. When the tally
// holds no GPU time (incomplete records) the shares are of launches instead.
std::vector<FamilyShare> family_shares(const KernelSummary& s);
// "fattn-mma 43.4%, fattn-vec 29.4%, fattn-helpers 27.2%"; "no attention kernel" when empty.
std::string family_shares_text(const std::vector<FamilyShare>& shares);

// Differences between the evidence pass and the probed check, as human text; empty when they tie.
// A check whose tally has no records cannot be tied and is a mismatch.
std::vector<std::string> compare_kernel_sets(const AttentionKernelSet& evidence, const AttentionKernelSet& check);

// The tie under several requests at once (flow/passes/evidence_pass.h job_load_streams > 1): how requests
// share batches differs from launch to launch, and ggml-cuda picks kernel variants by batch size, so
// the names may differ while the path is the same. The tie is then the path: fused attention kernels
// on both sides or on neither, and unfused attention kernels on both sides or on neither. Differences
// as human text; empty when the paths tie. A check without records cannot be tied.
std::vector<std::string> compare_kernel_paths(const AttentionKernelSet& evidence, const AttentionKernelSet& check);

}  // namespace fp
