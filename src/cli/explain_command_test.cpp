#include "cli/explain_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/testing.h"
#include "evidence/testing.h"

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
