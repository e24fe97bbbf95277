// The attention kernels a run executed, as sets of names: the signal that ties a quiet, timed
// configuration to the evidence pass on a GPU (flow/probed_check.h). Same request, same runtime,
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

// Differences between the evidence pass and the probed check, as human text; empty when they tie.
// A check whose tally has no records cannot be tied and is a mismatch.
std::vector<std::string> compare_kernel_sets(const AttentionKernelSet& evidence, const AttentionKernelSet& check);

}  // namespace fp
