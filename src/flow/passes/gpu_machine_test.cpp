#include "flow/passes/gpu_machine.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "flow/passes/case_context.h"
#include "runtime/runtime_data.h"
#include "util/text.h"

namespace fp {
namespace {

GetEnvFn env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(GpuMachine, DeclarationFromTheEnvironmentOrTheMachineFile) {
  auto none = declared_gpus(env_of({}), "/nonexistent/machine.json");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto two = declared_gpus(env_of({{"FLASHPROOF_EXPECT_GPUS", "2"}}), "");
  ASSERT_TRUE(two.ok() && two->has_value());
  EXPECT_EQ((*two)->gpus, 2);
  EXPECT_EQ((*two)->source, "FLASHPROOF_EXPECT_GPUS=2");
  auto zero = declared_gpus(env_of({{"FLASHPROOF_EXPECT_GPUS", "0"}}), "");
  ASSERT_TRUE(zero.ok());
  EXPECT_FALSE(zero->has_value());
  auto bad = declared_gpus(env_of({{"FLASHPROOF_EXPECT_GPUS", "two"}}), "");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.error().message, "FLASHPROOF_EXPECT_GPUS = \"two\": expected the number of GPUs")) << bad.error().message;

  const std::string file = ::testing::TempDir() + "fp_machine.json";
  ASSERT_TRUE(write_file_atomic(file, R"({"gpus": 8, "comment": "the 8-GPU box"})").ok());
  auto from_file = declared_gpus(env_of({{"FLASHPROOF_MACHINE_FILE", file}}), "");
  ASSERT_TRUE(from_file.ok() && from_file->has_value()) << (from_file ? "" : from_file.error().message);
  EXPECT_EQ((*from_file)->gpus, 8);
  EXPECT_EQ((*from_file)->source, file);
  auto default_file = declared_gpus(env_of({}), file);
  ASSERT_TRUE(default_file.ok() && default_file->has_value());
  ASSERT_TRUE(write_file_atomic(file, R"({"gpu": 8})").ok());
  auto typo = declared_gpus(env_of({{"FLASHPROOF_MACHINE_FILE", file}}), "");
  ASSERT_FALSE(typo.ok());
  EXPECT_TRUE(has(typo.error().message, file + ": field \"gpus\"")) << typo.error().message;
}

TEST(GpuMachine, GpusNeededByACase) {
  auto sigs = load_runtime_signatures("llama-server");
  ASSERT_TRUE(sigs.ok()) << sigs.error().message;
  Case c;
  auto needs = [&](std::vector<std::string> backends, int all = 1) {
    c.expect.backends = std::move(backends);
    return gpus_needed(c, *sigs, all);
  };
  EXPECT_EQ(needs({"CPU"}), 0);
  EXPECT_EQ(needs({"CUDA0"}), 1);
  EXPECT_EQ(needs({"CUDA1"}), 2);  // ordinal 1: the second visible GPU
  EXPECT_EQ(needs({"CUDA0", "CUDA1"}), 2);
  EXPECT_EQ(needs({"all-gpus"}, 4), 4);
  EXPECT_EQ(needs({"all-gpus"}, 0), 1);
  EXPECT_EQ(needs({"Vulkan0"}), 0);  // not a GPU of NVML or the kernel probe: levels 1 and 2 by default
}

// A case whose expected device (Vulkan0) the runtime does not list skips (125) with the reason, on a
// machine that declares GPUs too: that declaration counts NVIDIA GPUs. /bin/true lists nothing.
TEST(GpuMachine, UnlistedDeviceSkips) {
  const Suite repo = *load_suite(FLASHPROOF_SOURCE_DIR);
  setenv("FLASHPROOF_LLAMA_SERVER", "/bin/true", 1);
  setenv("FLASHPROOF_EXPECT_GPUS", "1", 1);
  auto r = resolve_case_context(repo.root + "/cases/vulkan-tiny-fa-on.json", repo);
  unsetenv("FLASHPROOF_EXPECT_GPUS");
  unsetenv("FLASHPROOF_LLAMA_SERVER");
  ASSERT_FALSE(r.ok());
  if (has(r.error().message, "model not on this machine")) GTEST_SKIP() << r.error().message;
  EXPECT_EQ(r.exit_code(), kResolveSkip) << r.error().message;
  EXPECT_TRUE(has(r.error().message,
                  "SKIP: case expects backend Vulkan0 but `llama-server --list-devices` (with the case's launch.env "
                  "GGML_BACKEND_PATH=libggml-vulkan.so GGML_VK_VISIBLE_DEVICES=0) lists no device"))
      << r.error().message;
}

// On this CPU machine a CUDA case skips (125) unless the machine declares GPUs: then it fails (2).
TEST(GpuMachine, GpuBoxMayNotSkip) {
  const Suite repo = *load_suite(FLASHPROOF_SOURCE_DIR);
  const std::string case_file = repo.root + "/tests/gpu/llama-cuda/cases/live-cuda-realistic-fa-on.json";
  setenv("FLASHPROOF_LLAMA_SERVER", "/bin/true", 1);
  setenv("FLASHPROOF_MACHINE_FILE", "/nonexistent/flashproof-machine.json", 1);
  unsetenv("FLASHPROOF_EXPECT_GPUS");
  unsetenv("FLASHPROOF_TEST_DOUBLE_GPU");
  auto skipped = resolve_case_context(case_file, repo);
  const bool no_gpu_here = !skipped.ok() && has(skipped.error().message, "GPU");
  if (no_gpu_here) {
    EXPECT_EQ(skipped.exit_code(), kResolveSkip) << skipped.error().message;
    EXPECT_TRUE(has(skipped.error().message, "SKIP: ")) << skipped.error().message;
  }
  setenv("FLASHPROOF_EXPECT_GPUS", "1", 1);
  auto failed = resolve_case_context(case_file, repo);
  if (no_gpu_here) {
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.exit_code(), kResolveIncomplete) << failed.error().message;
    EXPECT_TRUE(has(failed.error().message, "GPU box (FLASHPROOF_EXPECT_GPUS=1) cannot run this GPU case: case expects backend CUDA0"))
        << failed.error().message;
  }
  setenv("FLASHPROOF_EXPECT_GPUS", "lots", 1);
  auto bad = resolve_case_context(case_file, repo);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.exit_code(), kResolveIncomplete);
  unsetenv("FLASHPROOF_EXPECT_GPUS");
  unsetenv("FLASHPROOF_MACHINE_FILE");
  unsetenv("FLASHPROOF_LLAMA_SERVER");
}

}  // namespace
}  // namespace fp
