// `flashproof explain` on the live H200 recordings (fixtures/logs/h200-live: Debian sid's
// llama-server with its CUDA backend, flashproof's probe): the exit codes and lines a person sees.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/fixtures.h"
#include "testing/run_explain.h"


namespace fp {
namespace {

using fp::testing::Ran;

Ran explain(const std::string& name) {
  const std::string base = fp::testing::fixture("logs/h200-live/" + name);
  return fp::testing::run_explain({"--runtime", "llama-server", "--log", base + ".log.gz", "--kernels", base + ".kernels.tsv",
                                   "--expect-backend", "CUDA0"});
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(ExplainLiveH200, VerboseVerdicts) {
  struct Want {
    const char* name;
    int code;
    const char* line;
  };
  for (const Want& w : std::vector<Want>{
           {"fa_on.verbose", 0, "level 2 placement: 76 of 76 FLASH_ATTN nodes on CUDA0"},
           {"fa_off.verbose", 1, "level 2 placement: no fused attention node; SOFT_MAX nodes: CUDA0 76"},
           {"fa_on_q5_1.verbose", 0, "level 2 placement: 76 of 76 FLASH_ATTN nodes on CUDA0"},
           {"fa_on_q4_1.verbose", 0, "level 2 placement: 76 of 76 FLASH_ATTN nodes on CUDA0"},
           {"fa_on_q8_0_q4_0.verbose", 0, "level 2 placement: 76 of 76 FLASH_ATTN nodes on CUDA0"},
           {"hd48_fa_on.verbose", 1, "silent fallback: the log says enabled, the evidence says otherwise"},
           {"hd48_fa_auto.verbose", 1, "resolved: \"resolve_fused_ops: Flash Attention not supported, set to disabled\""},
       }) {
    Ran r = explain(w.name);
    EXPECT_EQ(r.code, w.code) << w.name << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.out, w.line)) << w.name << "\n" << r.out;
    EXPECT_TRUE(has(r.out, w.code == 0 ? "verdict: active" : "verdict: not active")) << w.name << "\n" << r.out;
  }
}

TEST(ExplainLiveH200, QuietRunSaysWhyPlacementIsMissingAndStillFindsTheFallback) {
  Ran r = explain("hd48_fa_on.quiet");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "level 2 placement: unavailable: no node records; run with GGML_SCHED_DEBUG=2 and -v")) << r.out;
  EXPECT_TRUE(has(r.out, "silent fallback")) << r.out;
  Ran on = explain("fa_on.quiet");
  EXPECT_EQ(on.code, 0) << on.out << on.err;
  EXPECT_TRUE(has(on.out, "level 3 kernels: 160 fused attention kernel launches")) << on.out;
}

}  // namespace
}  // namespace fp
