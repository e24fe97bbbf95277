#include "evidence/kernel_tally.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <limits>


namespace fp {
namespace {

using fp::testing::h200_run;
using fp::testing::llama_signatures;

TEST(KernelTally, ParsesLinesSkipsBlanksAndComments) {
  auto t = parse_kernel_tally("# probe\n3\t100\tvoid flash_attn_ext_f16<128>(int)\n\n2\t50\tgemm\n", "t.tsv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->kernels.size(), 2u);
  EXPECT_EQ(t->kernels[0].launches, 3);
  EXPECT_EQ(t->kernels[0].gpu_ns, 100);
  EXPECT_EQ(t->kernels[0].name, "void flash_attn_ext_f16<128>(int)");
  EXPECT_EQ(t->kernels[1].line, 4u);
}

TEST(KernelTally, BadLineNamesFileAndLine) {
  auto t = parse_kernel_tally("1\t2\tok\n1 2 spaces\n", "probe.tsv");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("probe.tsv:2:"), std::string::npos) << t.error().message;
  auto n = parse_kernel_tally("x\t2\tname\n", "probe.tsv");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("probe.tsv:1: launches \"x\""), std::string::npos) << n.error().message;
}

TEST(KernelTally, EmptyTallyHasNoRecords) {
  auto t = parse_kernel_tally("", "empty.tsv");
  ASSERT_TRUE(t.ok());
  KernelSummary s = classify_kernels(*t, llama_signatures());
  EXPECT_FALSE(s.has_records());
  EXPECT_EQ(s.fused_launches, 0);
}

TEST(KernelTally, MidFaOnFusedKernels) {
  const KernelSummary& k = h200_run("mid_fa_on").kernels;
  EXPECT_EQ(k.records, 23u);
  EXPECT_EQ(k.fused_launches, 624);
  EXPECT_EQ(k.fused_ns, 17696197);
  EXPECT_EQ(k.unfused_launches, 0);
  EXPECT_EQ(k.total_ns, 116091402);
  EXPECT_NEAR(k.attention_share(), 17696197.0 / 116091402.0, 1e-12);
  ASSERT_FALSE(k.top_fused.empty());
  EXPECT_EQ(k.top_fused[0].rfind("void flash_attn_ext_f16<128, 128, 16, 4, false, false>", 0), 0u);
}

TEST(KernelTally, MidFaOffSoftMaxOnly) {
  const KernelSummary& k = h200_run("mid_fa_off").kernels;
  EXPECT_EQ(k.fused_launches, 0);
  EXPECT_EQ(k.unfused_launches, 360);
  EXPECT_EQ(k.unfused_ns, 30556295);
  ASSERT_FALSE(k.top_unfused.empty());
  EXPECT_EQ(k.top_unfused[0].rfind("void soft_max_f32<true, 0, 0, float>", 0), 0u);
}

TEST(KernelTally, Q5_1NeitherFusedNorSoftMaxOnTheGpu) {
  const KernelSummary& k = h200_run("mid_fa_on_q5_1").kernels;
  EXPECT_EQ(k.records, 23u);
  EXPECT_EQ(k.fused_launches, 0);
  EXPECT_EQ(k.unfused_launches, 0);
  EXPECT_DOUBLE_EQ(k.attention_share(), 0.0);
}

// Found by fuzz/fuzz_kernel_tally: the sums overflowed a long long (undefined behaviour).
TEST(KernelTally, HugeCountsSaturateInsteadOfOverflowing) {
  auto t = parse_kernel_tally("9223372036854775807\t9223372036854775807\tflash_attn_ext_f16\n"
                              "9223372036854775807\t9223372036854775807\tflash_attn_ext_f16\n",
                              "huge.tsv");
  ASSERT_TRUE(t) << t.error().message;
  KernelSummary s = classify_kernels(*t, fp::testing::llama_signatures());
  EXPECT_EQ(s.total_launches, std::numeric_limits<long long>::max());
  EXPECT_EQ(s.total_ns, std::numeric_limits<long long>::max());
  EXPECT_GE(s.attention_share(), 0.0);
}

// Found by fuzz/fuzz_kernel_tally: a very long kernel name overflowed the stack in std::regex. Read
// whole now (PCRE2): a name of 2.6 MB is classified, and its K/V types read from its template.
TEST(KernelTally, VeryLongKernelNameIsReadWhole) {
  std::string name = "void flash_attn_ext_vec<128, 1, (ggml_type)7, (ggml_type)7, false>(";
  for (int i = 0; i < 200000; ++i) name += "char const*, ";
  name += "long)";
  auto t = parse_kernel_tally("1\t2\t" + name + "\n", "long.tsv");
  ASSERT_TRUE(t) << t.error().message;
  KernelSummary s = classify_kernels(*t, fp::testing::llama_signatures());
  EXPECT_EQ(s.records, 1u);
  EXPECT_EQ(s.total_launches, 1);
  EXPECT_EQ(s.fused_launches, 1);
  EXPECT_EQ(s.fused_kv_types, std::vector<std::string>{"q5_1-q5_1"});
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

TEST(KernelTally, ProbeV2DeviceColumnAndHeaderStatus) {
  auto t = parse_kernel_tally(
      "# flashproof-probe v2 status=ok state=final pid=7 cupti=130001 records=3 incomplete=0 dropped=0 kernels=3\n"
      "8\t100\t0\tvoid flash_attn_ext_f16<128, 128, 32, 2, false, false, false>(char const*)\n"
      "4\t60\t1\tvoid flash_attn_ext_f16<128, 128, 32, 2, false, false, false>(char const*)\n"
      "2\t50\t1\tgemm\n",
      "v2.tsv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->status, "ok");
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->kernels[0].device, 0);
  EXPECT_EQ(t->kernels[1].device, 1);
  EXPECT_EQ(t->kernels[1].name, "void flash_attn_ext_f16<128, 128, 32, 2, false, false, false>(char const*)");
  KernelSummary s = classify_kernels(*t, llama_signatures());
  EXPECT_TRUE(s.devices_known);
  EXPECT_EQ(s.fused_launches, 12);
  EXPECT_EQ(s.fused_launches_by_device, (std::map<int, long long>{{0, 8}, {1, 4}}));
}

TEST(KernelTally, OldTalliesStillLoadWithDeviceUnknown) {
  for (const char* f : {"logs/h200/mid_fa_on.kernels.tsv", "logs/h200-live/fa_on.verbose.kernels.tsv"}) {
    auto t = read_kernel_tally(fp::testing::fixture(f));
    ASSERT_TRUE(t.ok()) << t.error().message;
    KernelSummary s = classify_kernels(*t, llama_signatures());
    EXPECT_FALSE(s.devices_known) << f;
    EXPECT_GT(s.fused_launches, 0) << f;
    EXPECT_EQ(s.fused_launches_by_device, (std::map<int, long long>{{-1, s.fused_launches}})) << f;
    for (const auto& k : t->kernels) EXPECT_EQ(k.device, -1) << f << ":" << k.line;
  }
}

TEST(KernelTally, RefusedHeaderKeepsStatusAndReason) {
  auto t = parse_kernel_tally(
      "# flashproof-probe v2 status=refused state=final pid=9 cupti=130001 reason=cuptiSubscribe: "
      "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (CUptiResult 39)\n",
      "refused.tsv");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status, "refused");
  EXPECT_EQ(t->reason, "cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (CUptiResult 39)");
  EXPECT_TRUE(t->kernels.empty());
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

// A fresh folder for the per-process tallies of one test.
std::string tally_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/fp_tallies_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(KernelTally, PerProcessPatternCarriesThePid) {
  EXPECT_EQ(per_process_tally_pattern("/r/run/kernels.tsv"), "/r/run/kernels.%p.tsv");
  EXPECT_EQ(per_process_tally_pattern("/r/run/kernels-probed-check.tsv"), "/r/run/kernels-probed-check.%p.tsv");
}

// vLLM: the API server process ran no kernel (an empty, ok tally), its engine core child ran them all.
TEST(KernelTally, TalliesOfTwoProcessesMerge) {
  const std::string dir = tally_dir("two");
  ASSERT_TRUE(write_file_atomic(dir + "/kernels.4100.tsv",
                                "# flashproof-probe v2 status=ok state=final pid=4100 cupti=130001 records=0 incomplete=0 dropped=0 kernels=0\n"));
  ASSERT_TRUE(write_file_atomic(
      dir + "/kernels.4187.tsv",
      "# flashproof-probe v2 status=ok state=final pid=4187 cupti=130001 records=30 incomplete=0 dropped=0 kernels=3\n"
      "20\t900\t0\tvoid flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>, false>(Flash_fwd_params)\n"
      "6\t300\t0\tvoid vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*)\n"
      "4\t800\t0\tgemm\n"));
  ASSERT_TRUE(write_file_atomic(dir + "/kernels.notapid.tsv", "garbage that is not read\n"));
  auto t = read_process_tallies(dir + "/kernels.tsv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->processes, 2u);
  EXPECT_EQ(t->status, "ok");
  EXPECT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->source, dir + "/kernels.4100.tsv + " + dir + "/kernels.4187.tsv");
  auto sigs = load_runtime_signatures("vllm");
  ASSERT_TRUE(sigs.ok()) << sigs.error().message;
  KernelSummary k = classify_kernels(*t, *sigs);
  EXPECT_EQ(k.processes, 2u);
  EXPECT_EQ(k.fused_launches, 26);  // the engine core's FA2 and KV-write kernels count
  EXPECT_EQ(k.families.at("FA2").launches, 20);
  // The merged text reads back as the same tally (what the run keeps as kernels.tsv).
  auto again = parse_kernel_tally(kernel_tally_text(*t), "merged.tsv");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->status, "ok");
  ASSERT_EQ(again->kernels.size(), 3u);
  EXPECT_EQ(again->kernels[0].launches, 20);
  EXPECT_EQ(again->kernels[0].device, 0);
}

TEST(KernelTally, SameKernelInTwoProcessesAddsUp) {
  auto a = parse_kernel_tally("1\t10\t0\tvoid flash_attn_ext_f16<128>(int)\n2\t5\t1\tvoid flash_attn_ext_f16<128>(int)\n", "a.tsv");
  auto b = parse_kernel_tally("# flashproof-probe v2 status=refused state=final pid=2 cupti=1 reason=cuptiSubscribe: busy\n", "b.tsv");
  auto c = parse_kernel_tally("3\t30\t0\tvoid flash_attn_ext_f16<128>(int)\n", "c.tsv");
  ASSERT_TRUE(a && b && c);
  a->status = c->status = "ok";
  KernelTally m = merge_kernel_tallies({*a, *b, *c});
  EXPECT_EQ(m.processes, 3u);
  ASSERT_EQ(m.kernels.size(), 2u);  // device 0 and device 1 stay apart
  EXPECT_EQ(m.kernels[0].launches, 4);
  EXPECT_EQ(m.kernels[0].gpu_ns, 40);
  EXPECT_EQ(m.kernels[1].device, 1);
  EXPECT_EQ(m.status, "ok");  // another process was refused: said, but the kernels of the others count
  EXPECT_EQ(m.reason, "b.tsv: refused (cuptiSubscribe: busy)");
  KernelTally refused = merge_kernel_tallies({*b});
  EXPECT_EQ(refused.status, "refused");
}

TEST(KernelTally, OldSingleFileStillLoadsWhereNoProcessFileIs) {
  const std::string dir = tally_dir("single");
  auto text = read_file(fp::testing::fixture("logs/h200-live/fa_on.quiet.kernels.tsv"));
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(write_file_atomic(dir + "/kernels.tsv", *text));
  auto t = read_process_tallies(dir + "/kernels.tsv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->source, dir + "/kernels.tsv");
  EXPECT_EQ(t->processes, 1u);
  EXPECT_EQ(t->kernels.size(), 22u);
  auto none = read_process_tallies(dir + "/absent.tsv");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find(dir + "/absent.tsv"), std::string::npos) << none.error().message;
}

// The kernel families of the runtime data, on the recorded H200 tallies.
TEST(KernelTally, FamiliesOfTheRecordedH200Runs) {
  const KernelSummary& on = h200_run("mid_fa_on").kernels;
  EXPECT_EQ(on.families.size(), 3u);
  EXPECT_EQ(on.families.at("fattn-mma").launches, 112);
  EXPECT_EQ(on.families.at("fattn-vec").launches, 248);
  EXPECT_EQ(on.families.at("fattn-helpers").launches, 264);
  EXPECT_TRUE(on.families.at("fattn-mma").fused);
  const KernelSummary& off = h200_run("mid_fa_off").kernels;
  ASSERT_EQ(off.families.size(), 1u);
  EXPECT_FALSE(off.families.at("soft_max").fused);
  EXPECT_EQ(off.families.at("soft_max").launches, 360);
}

}  // namespace
}  // namespace fp
