#include "golden/fingerprint.h"

#include <gtest/gtest.h>

#include "util/text.h"

namespace fp {
namespace {

Fingerprint cpu_box() {
  Fingerprint f;
  f.cpu_model = "Intel(R) Xeon(R) Processor";
  f.cores = 2;
  f.runtime = "llama-server";
  f.runtime_version = "0.7.0 (build 11669, commit Debian)";
  f.runtime_build = "11669";
  f.runtime_build_log = "11669";
  f.model_sha256 = "50ad";
  f.launch = "{runtime} -m {model} -fa {flag}";
  f.flashproof_version = "0.1.0";
  return f;
}

TEST(Fingerprint, IdIsReadableWithTheBuildSpelledLikeTheRuntime) {
  EXPECT_EQ(cpu_box().id(), "intel-r-xeon-r-processor-2c-llama-server-b11669");
  Fingerprint g = cpu_box();
  g.gpu_name = "NVIDIA H200";
  g.gpu_driver = "580.159.04";
  EXPECT_EQ(g.id(), "nvidia-h200-580.159.04-llama-server-b11669");
  Fingerprint v = cpu_box();
  v.runtime_build.clear();
  v.runtime_version = "0.11.2";
  EXPECT_EQ(v.id(), "intel-r-xeon-r-processor-2c-llama-server-0.11.2");
}

TEST(Fingerprint, JsonRoundTripsEveryField) {
  Fingerprint f = cpu_box();
  f.gpu_name = "2 x NVIDIA H200";
  f.cuda_version = "13.0";
  auto back = fingerprint_from_json(nlohmann::json::parse(f.to_json().dump()), "t");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(fingerprint_changes(f, *back).empty()) << describe_changes(fingerprint_changes(f, *back));
  EXPECT_EQ(back->id(), f.id());
  EXPECT_EQ(back->launch, f.launch);
  auto machine = nlohmann::json::parse(f.machine_json().dump());
  EXPECT_FALSE(machine.contains("model_sha256"));
  EXPECT_FALSE(machine.contains("launch"));
  EXPECT_EQ(machine.at("id"), f.id());
}

TEST(Fingerprint, ChangesAreListedFieldByField) {
  Fingerprint before = cpu_box(), after = cpu_box();
  after.runtime_build = "11700";
  after.runtime_version = "0.8.0 (build 11700, commit Debian)";
  after.model_sha256 = "beef";
  auto changes = fingerprint_changes(before, after);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].field, "runtime_version");
  EXPECT_EQ(changes[1].field, "runtime_build");
  EXPECT_EQ(changes[1].before, "11669");
  EXPECT_EQ(changes[1].after, "11700");
  EXPECT_EQ(changes[2].field, "model_sha256");
  EXPECT_NE(describe_changes(changes).find("  runtime_build: 11669 -> 11700\n"), std::string::npos);
  EXPECT_EQ(describe_changes({}), "  (no change)\n");
}

TEST(Fingerprint, MachinePartDoesNotReportCaseFieldsAsChanged) {
  Fingerprint machine = cpu_box();
  machine.model_sha256.clear();
  machine.launch.clear();
  EXPECT_TRUE(fingerprint_changes(machine, cpu_box()).empty());
  Fingerprint more_cores = cpu_box();
  more_cores.cores = 4;
  auto c = fingerprint_changes(cpu_box(), more_cores);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].field, "cores");
  EXPECT_FALSE(same_hardware(cpu_box(), more_cores));
  Fingerprint newer = cpu_box();
  newer.runtime_build = "12000";
  EXPECT_TRUE(same_hardware(cpu_box(), newer));
}

TEST(Fingerprint, BadFilesAreErrorsNamingTheFileAndField) {
  auto wrong = fingerprint_from_json(nlohmann::json::parse(R"({"cores": "two"})"), "golden/x/fingerprint.json");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("golden/x/fingerprint.json: field \"cores\""), std::string::npos) << wrong.error().message;
  auto unknown = fingerprint_from_json(nlohmann::json::parse(R"({"runtime_biuld": "1"})"), "f.json");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown key \"runtime_biuld\""), std::string::npos);
  const std::string path = ::testing::TempDir() + "fp_truncated_fingerprint.json";
  std::string full = cpu_box().to_json().dump(2);
  ASSERT_TRUE(write_file_atomic(path, full.substr(0, full.size() / 2)).ok());
  auto truncated = load_fingerprint(path);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find(path), std::string::npos);
  EXPECT_NE(truncated.error().message.find("truncated or corrupt"), std::string::npos);
}

TEST(Fingerprint, BuildStatedInTheLog) {
  EXPECT_EQ(build_stated_in_log("0.00.024.814 I cmn  common_param: common_params_print_info: build 11669 (Debian) with GNU 16.2.0\n"),
            "11669");
  EXPECT_EQ(build_stated_in_log("main: build: 4242 (abc)\n"), "4242");
  EXPECT_EQ(build_stated_in_log("x\nsystem_info: rebuild 7\n"), "");
  EXPECT_EQ(build_stated_in_log(""), "");
}

TEST(Fingerprint, MachineFingerprintHasCpuAndCores) {
  Fingerprint f = machine_fingerprint();
  EXPECT_FALSE(f.cpu_model.empty());
  EXPECT_GT(f.cores, 0u);
}

// The GPU's UUID and the OS kernel are said, not part of the id: another machine behind the same GPU
// kind and driver keeps its goldens, and the change is named; a file from before these fields
// names no change.
TEST(Fingerprint, GpuUuidAndKernelAreNamedWhenBothSidesKnowThem) {
  Fingerprint a = cpu_box(), b = cpu_box();
  a.gpu_uuid = "GPU-1111";
  b.gpu_uuid = "GPU-2222";
  a.os_kernel = "6.1.0";
  b.os_kernel = "6.8.0";
  EXPECT_EQ(a.id(), b.id());
  auto changes = fingerprint_changes(a, b);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].field, "gpu_uuid");
  EXPECT_EQ(changes[1].field, "os_kernel");
  Fingerprint old = cpu_box();  // recorded before the fields existed
  EXPECT_TRUE(fingerprint_changes(old, b).empty());
  auto back = fingerprint_from_json(nlohmann::json::parse(a.to_json().dump()), "t");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->os_kernel, "6.1.0");
  EXPECT_EQ(back->gpu_uuid, "GPU-1111");
}

}  // namespace
}  // namespace fp
