// The attention kernel set of a golden and of a run: attention kernels by family (the kernel rules of
// the runtime data name them: ggml-cuda fattn-mma / fattn-tile / fattn-vec / fattn-wmma; vLLM FA2 /
// FA3 / FlashInfer / Triton) and each family's share of the attention GPU time, one share per probed
// launch (the evidence pass and each probed check). Compared family by family with the noise rule
// of golden/threshold_policy.h (judge_share): a family lost, a family new, a share moved beyond noise
// fail; a lost family with a new one beside it is named as a swap ("fattn-mma kernels replaced by
// fattn-vec kernels: share 92% -> 0% / 0% -> 88%"). Used by the golden comparison (flow/golden_check),
// the side-by-side gate (flow/build_gate) and `flashproof diff` (report/result_diff).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "golden/golden_file.h"
#include "golden/threshold_policy.h"

namespace fp {

struct FamilySamples {
  std::string family;
  bool fused = true;
  std::vector<double> shares;  // one per probed launch; 0 in a launch where the family did not run
};

// One probed launch's share of one family (evidence/kernel_set.h family_shares, converted by the flow).
struct FamilyLaunchShare {
  std::string family;
  bool fused = true;
  double share = 0;
};

// Appends one probed launch: families it lacks get a 0, families new to `samples` get a 0 for each
// earlier launch. A launch without attention kernels adds nothing (no evidence is not a share of 0).
void add_probed_launch(std::vector<FamilySamples>& samples, const std::vector<FamilyLaunchShare>& launch);

// The golden's kernel set from a run's samples: per family the median and raw MAD of its shares, n
// = probed launches.
std::map<std::string, GoldenKernelFamily> golden_kernel_families(const std::vector<FamilySamples>& samples);

struct FamilyComparison {
  std::string family;
  bool fused = true;
  double golden_share = 0, run_share = 0;  // medians; 0 on the side that lacks the family
  size_t golden_n = 0, run_n = 0;           // probed launches
  ShareJudgement judgement;
  bool failed = false;   // lost, moved, or new with a share above the minimum effect
  bool in_swap = false;  // named in the swap sentence
  std::string message;   // "fattn-mma: 43% -> 44% (same; ...)"
};

struct KernelFamilyComparison {
  std::vector<FamilyComparison> families;  // golden families by name, then new ones
  // The sentence naming a swap: the families lost and what took their place (new families, or
  // families grown beyond noise); or a loss, or new families alone; "" when none.
  std::string swap;
  bool failed() const;
  // What fails, one line each: "KERNEL SWAP: <swap>" first, then "KERNEL SHARE MOVED: <family's
  // line>" for each failing family the sentence does not name.
  std::vector<std::string> failures() const;
  // Every family's line, for the report.
  std::vector<std::string> lines() const;
};

// `run` holds at least one probed launch: a run without kernel evidence is the caller's to report
// (evidence lost), not a loss of every family.
KernelFamilyComparison compare_kernel_families(const std::map<std::string, GoldenKernelFamily>& golden,
                                               const std::vector<FamilySamples>& run);

// "fattn-mma 43%, fattn-vec 29%" (medians), "none" when empty.
std::string kernel_families_text(const std::map<std::string, GoldenKernelFamily>& families);

}  // namespace fp
