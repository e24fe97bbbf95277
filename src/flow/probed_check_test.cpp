#include "flow/probed_check.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

TEST(ProbedCheck, NotRunWithoutTheProbeSaysWhy) {
  EvidenceOutcome ev;
  ev.probe.why_not = "no GPU: libnvidia-ml.so.1 not found";
  EXPECT_EQ(probed_check_blocker(ev), "no GPU: libnvidia-ml.so.1 not found");
  ProbedCheck pc;
  pc.why_not = probed_check_blocker(ev);
  EXPECT_EQ(probed_check_text(pc), "not run: no GPU: libnvidia-ml.so.1 not found");
}

TEST(ProbedCheck, NothingToTieToIsNamed) {
  EvidenceOutcome ev;
  ev.probe.attached = true;
  ev.probe.tally_path = "/r/kernels.tsv";
  EXPECT_EQ(probed_check_blocker(ev), "the evidence pass left no kernel tally (/r/kernels.tsv): nothing to tie to");
  ev.kernels = KernelSummary{};
  EXPECT_EQ(probed_check_blocker(ev), "the evidence pass's kernel tally has no records: nothing to tie to");
  ev.kernels->records = 3;
  EXPECT_EQ(probed_check_blocker(ev), "");
}

TEST(ProbedCheck, TextSaysIdenticalOrDiffers) {
  ProbedCheck pc;
  pc.ran = true;
  pc.check.records = 5;
  pc.check.fused = {"void flash_attn_ext_vec<128>(char const*)"};
  EXPECT_EQ(probed_check_text(pc), "attention kernels identical to the evidence pass (fused: flash_attn_ext_vec<128>; unfused: none)");
  pc.mismatches = {"fused attention kernels differ: only in the evidence pass: a", "unfused attention kernels differ: b"};
  EXPECT_EQ(probed_check_text(pc),
            "attention kernels DIFFER from the evidence pass: fused attention kernels differ: only in the evidence pass: a; "
            "unfused attention kernels differ: b");
}

}  // namespace
}  // namespace fp
