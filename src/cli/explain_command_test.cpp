#include "cli/explain_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/model_recipe.h"
#include "testing/fixtures.h"
#include "testing/run_explain.h"
#include "util/text.h"

namespace fp {
namespace {

using fp::testing::Ran;
Ran run(std::vector<std::string> args) { return fp::testing::run_explain(std::move(args)); }

std::string h200(const std::string& file) { return fp::testing::fixture("logs/h200/" + file); }

TEST(ExplainCommand, ActiveExitsZero) {
  Ran r = run({"--runtime", "llama-server", "--log", h200("mid_fa_on.log.gz"), "--kernels",
               h200("mid_fa_on.kernels.tsv"), "--expect-backend", "CUDA0"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: active"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("156 of 156 FLASH_ATTN nodes on CUDA0"), std::string::npos) << r.out;
}

TEST(ExplainCommand, SilentFallbackExitsOne) {
  Ran r = run({"--runtime=llama-server", "--log", h200("mid_fa_on_q5_1.log.gz"), "--kernels",
               h200("mid_fa_on_q5_1.kernels.tsv")});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("silent fallback"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DISAGREEMENT"), std::string::npos) << r.out;
}

TEST(ExplainCommand, NoEvidenceExitsTwo) {
  std::string path = ::testing::TempDir() + "fp_explain_empty.log";
  ASSERT_TRUE(write_file_atomic(path, "nothing to see\n").ok());
  Ran r = run({"--runtime", "llama-server", "--log", path});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: no evidence"), std::string::npos) << r.out;
}

// Issue 13: the log alone never proves "active". A CPU run at -lv 4 (no GGML_SCHED_DEBUG) says
// "Flash Attention enabled" and has no placement record; with no tally either: no evidence.
TEST(ExplainCommand, LogWithoutPlacementOrTallyExitsTwo) {
  Ran r = run({"--runtime", "llama-server", "--log", fp::testing::fixture("logs/cpu/b11669_tiny_fa_on_lv4.log.gz"),
               "--expect-backend", "CPU"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: no evidence"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NO EVIDENCE: the log alone never proves fused attention active"), std::string::npos) << r.out;
}

TEST(ExplainCommand, RequiredLevelThatYieldsNothingExitsTwo) {
  Ran r = run({"--runtime", "llama-server", "--log", h200("mid_fa_on.log.gz"), "--expect-backend", "CUDA0", "--require",
               "log,placement,kernels"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("NO EVIDENCE: level 3 kernels is required and yielded nothing: no tally given"), std::string::npos)
      << r.out;
  Ran bad = run({"--runtime", "llama-server", "--log", h200("mid_fa_on.log.gz"), "--require", "log,gpu"});
  EXPECT_EQ(bad.code, 64);
  EXPECT_NE(bad.err.find("\"gpu\" is not a level; valid: log, placement, kernels"), std::string::npos) << bad.err;
}

// Level 2 counts against the model's attention layers: 4 (fixtures/models/realistic.json).
TEST(ExplainCommand, PlacementCompletenessFromTheModel) {
  const std::string log = fp::testing::fixture("logs/h200-live/fa_on.verbose.log.gz");
  auto recipe = load_model_recipe(fp::testing::fixture("models/realistic.json"));
  ASSERT_TRUE(recipe.ok()) << recipe.error().message;
  const std::string model = ::testing::TempDir() + "fp_explain_realistic.gguf";
  ASSERT_TRUE(write_file_atomic(model, build_llama_gguf(*recipe)).ok());
  Ran with = run({"--runtime", "llama-server", "--log", log, "--expect-backend", "CUDA0", "--model", model});
  EXPECT_EQ(with.code, 0) << with.out << with.err;
  EXPECT_NE(with.out.find("placement completeness: complete: 19 graphs, 4 attention nodes each (the model's 4 attention "
                          "layers), layers from " + model + " (llama.block_count)"),
            std::string::npos)
      << with.out;
  Ran without = run({"--runtime", "llama-server", "--log", log, "--expect-backend", "CUDA0"});
  EXPECT_EQ(without.code, 0) << without.out;
  EXPECT_NE(without.out.find("placement completeness: not checked"), std::string::npos) << without.out;
  // A model with more layers than the log's graphs hold: the counts are partial, level 2 unusable.
  Ran wrong = run({"--runtime", "llama-server", "--log", log, "--expect-backend", "CUDA0", "--layers", "5"});
  EXPECT_EQ(wrong.code, 2) << wrong.out;
  EXPECT_NE(wrong.out.find("level 2 placement: unavailable: incomplete: graph 1 of 19 holds 4 attention nodes, the model "
                           "has 5 attention layers"),
            std::string::npos)
      << wrong.out;
  Ran both = run({"--runtime", "llama-server", "--log", log, "--model", model, "--layers", "4"});
  EXPECT_EQ(both.code, 64);
}

// A log cut off in the middle of a graph: the last graph holds fewer attention nodes than layers.
TEST(ExplainCommand, TruncatedLogCannotPassAsAPartialCount) {
  auto text = read_file(fp::testing::fixture("logs/h200-live/hd48_fa_on.verbose.log.gz"));
  ASSERT_TRUE(text.ok());
  const std::string cut = text->substr(0, text->rfind("(FLASH_ATTN)"));
  const std::string path = ::testing::TempDir() + "fp_explain_cut.log";
  ASSERT_TRUE(write_file_atomic(path, cut).ok());
  Ran r = run({"--runtime", "llama-server", "--log", path, "--expect-backend", "CUDA0", "--layers", "2"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("graph 19 of 19 holds 1 attention nodes, the model has 2 attention layers: the log is cut off"),
            std::string::npos)
      << r.out;
}

// A head size without ggml-cuda's vector kernel, read from the log's own print_info line (no --model):
// the recorded q8_0 run (head size 128) without its vector kernels, as a head size 96 model decodes.
TEST(ExplainCommand, HeadSizeFromTheLogForTheKernelsDegradedRule) {
  auto tsv = read_file(fp::testing::fixture("logs/h200/r2_q8_0.kernels.tsv"));
  ASSERT_TRUE(tsv.ok());
  std::string mma_only;
  for (const auto& line : split_lines(*tsv))
    if (line.find("flash_attn_ext_vec") == std::string::npos) mma_only += line + "\n";
  const std::string kernels = ::testing::TempDir() + "fp_explain_mma_only.tsv";
  ASSERT_TRUE(write_file_atomic(kernels, mma_only).ok());
  auto text = read_file(fp::testing::fixture("logs/h200/r2_q8_0.log.gz"));
  ASSERT_TRUE(text.ok());
  Ran at128 = run({"--runtime", "llama-server", "--log", h200("r2_q8_0.log.gz"), "--kernels", kernels, "--expect-backend", "CUDA0"});
  EXPECT_EQ(at128.code, 0) << at128.out << at128.err;
  EXPECT_EQ(at128.out.find("degraded"), std::string::npos) << at128.out;
  std::string hd96 = *text;
  for (size_t at = hd96.find("n_embd_head_k         = 128"); at != std::string::npos; at = hd96.find("n_embd_head_k         = 128", at))
    hd96.replace(at, 27, "n_embd_head_k         = 96");
  const std::string log96 = ::testing::TempDir() + "fp_explain_hd96.log";
  ASSERT_TRUE(write_file_atomic(log96, hd96).ok());
  Ran at96 = run({"--runtime", "llama-server", "--log", log96, "--kernels", kernels, "--expect-backend", "CUDA0"});
  EXPECT_NE(at96.out.find("verdict: active, degraded"), std::string::npos) << at96.out << at96.err;
  EXPECT_NE(at96.out.find("no version for head size 96"), std::string::npos) << at96.out;
}

TEST(ExplainCommand, UsageErrorsExit64NamingTheArgument) {
  Ran unknown = run({"--runtime", "llama-server", "--log", h200("mid_fa_on.log.gz"), "--frobnicate"});
  EXPECT_EQ(unknown.code, 64);
  EXPECT_NE(unknown.err.find("unknown argument \"--frobnicate\""), std::string::npos) << unknown.err;
  Ran missing = run({"--runtime", "llama-server"});
  EXPECT_EQ(missing.code, 64);
  EXPECT_NE(missing.err.find("missing required argument --log"), std::string::npos) << missing.err;
  Ran novalue = run({"--runtime", "llama-server", "--log"});
  EXPECT_EQ(novalue.code, 64);
  EXPECT_NE(novalue.err.find("--log needs a value"), std::string::npos) << novalue.err;
  Ran runtime = run({"--runtime", "nosuch-runtime", "--log", h200("mid_fa_on.log.gz")});
  EXPECT_EQ(runtime.code, 64);
  EXPECT_NE(runtime.err.find("--runtime \"nosuch-runtime\""), std::string::npos) << runtime.err;
  Ran nolog = run({"--runtime", "llama-server", "--log", "/nonexistent/x.log"});
  EXPECT_EQ(nolog.code, 64);
  EXPECT_NE(nolog.err.find("--log"), std::string::npos) << nolog.err;
}

TEST(ExplainCommand, MalformedTallyIsAUsageErrorNamingLine) {
  std::string path = ::testing::TempDir() + "fp_explain_bad.tsv";
  ASSERT_TRUE(write_file_atomic(path, "12 no tabs\n").ok());
  Ran r = run({"--runtime", "llama-server", "--log", h200("mid_fa_on.log.gz"), "--kernels", path});
  EXPECT_EQ(r.code, 64);
  EXPECT_NE(r.err.find(path + ":1:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fp
