// vLLM evidence: the data file's rules against their own samples, per-process records, memory
// lines, and the verdict on every recorded excerpt in fixtures/logs/vllm (expected.tsv).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "evidence/kernel_tally.h"
#include "evidence/log_records.h"
#include "evidence/log_scan.h"
#include "evidence/verdict.h"
#include "runtime/runtime_data.h"
#include "testing/fixtures.h"
#include "testing/run_explain.h"
#include "util/text.h"

namespace fp {
namespace {

using fp::testing::fixture;

const RuntimeSignatures& vllm_signatures() {
  static const RuntimeSignatures sigs = [] {
    auto r = load_runtime_signatures("vllm", std::string(FLASHPROOF_SOURCE_DIR) + "/src/runtime/data/vllm.json");
    if (!r) ADD_FAILURE() << r.error().message;
    return r ? *r : RuntimeSignatures{};
  }();
  return sigs;
}

TEST(VllmSignatures, FileLoadsNamingAttentionBackends) {
  const auto& s = vllm_signatures();
  EXPECT_TRUE(s.names_attention_backends());
  EXPECT_TRUE(s.process_prefix.has_value());
  EXPECT_TRUE(s.placement.empty());
  EXPECT_EQ(s.canonical_backend("Flash Attention"), "FLASH_ATTN");
  EXPECT_EQ(s.canonical_backend("AttentionBackendEnum.FLASHINFER"), "FLASHINFER");
  EXPECT_EQ(s.canonical_backend("FlashAttention-2"), "FLASH_ATTN");
}

TEST(VllmSignatures, EveryRuleMatchesItsExamplesAndNotItsCounterExamples) {
  const auto& sigs = vllm_signatures();
  RegexMatch m;
  for (const auto* section : {&sigs.log, &sigs.kernels}) {
    for (const auto& rule : *section) {
      for (const auto& ex : rule.examples) {
        EXPECT_TRUE(rule_search(rule, ex, m)) << "rule " << rule.name << " misses its example " << quote(ex);
        if (rule.captures.count("backend")) {
          std::string b = sigs.canonical_backend(capture(rule, m, "backend"));
          EXPECT_NE(std::find(sigs.attention_backends.begin(), sigs.attention_backends.end(), b),
                    sigs.attention_backends.end())
              << rule.name << ": captured backend " << quote(b) << " is not a known name";
        }
        if (rule.captures.count("state") && !rule.states.empty()) {
          EXPECT_EQ(rule.states.count(capture(rule, m, "state")), 1u) << rule.name << " " << quote(ex);
        }
      }
      for (const auto& ex : rule.counter_examples)
        EXPECT_FALSE(rule_search(rule, ex, m)) << "rule " << rule.name << " matches counter example " << quote(ex);
    }
  }
  for (const auto* prefix : {&sigs.process_prefix, &sigs.record_prefix}) {
    ASSERT_TRUE(prefix->has_value());
    for (const auto& ex : (*prefix)->examples) EXPECT_TRUE(regex_search(ex, (*prefix)->regex, m)) << ex;
    for (const auto& ex : (*prefix)->counter_examples)
      EXPECT_FALSE(regex_search(ex, (*prefix)->regex, m) && m.position(0) == 0) << ex;
  }
}

TEST(VllmSignatures, RecordsCarryTheirProcess) {
  auto records = split_records(
      "(VllmWorkerProcess pid=3329) INFO 04-17 20:54:29 [cuda.py:292] Using Flash Attention backend.\n"
      "INFO 04-17 20:54:09 [cuda.py:292] Using XFormers backend.\n",
      vllm_signatures());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].process, "VllmWorkerProcess pid=3329");
  EXPECT_EQ(records[0].text, "Using Flash Attention backend.");
  EXPECT_EQ(records[1].process, "");
  EXPECT_EQ(records[1].text, "Using XFormers backend.");
  LogScan scan = scan_log(records, vllm_signatures());
  EXPECT_EQ(scan.decided_backends(), (std::vector<std::string>{"FLASH_ATTN", "XFORMERS"}));
}

TEST(VllmSignatures, MemoryLines) {
  auto text = read_file(fixture("logs/vllm/v1_21348_kv_memory.log"));
  ASSERT_TRUE(text.ok());
  LogScan scan = scan_log(split_records(*text, vllm_signatures()), vllm_signatures());
  ASSERT_TRUE(scan.kv_total());
  EXPECT_NEAR(scan.kv_total()->mib, 8.11 * 1024, 0.01);
  ASSERT_EQ(scan.kv_tokens.size(), 1u);
  EXPECT_EQ(scan.kv_tokens[0].value, 178880);
  auto text2 = read_file(fixture("logs/vllm/v1_49011_kv_cache.log"));
  ASSERT_TRUE(text2.ok());
  LogScan scan2 = scan_log(split_records(*text2, vllm_signatures()), vllm_signatures());
  ASSERT_EQ(scan2.kv_tokens.size(), 1u);
  EXPECT_EQ(scan2.kv_tokens[0].value, 1823372);
  EXPECT_EQ(scan2.kv_tokens[0].quote.process, "EngineCore pid=7476");
}

TEST(VllmSignatures, KernelsByBackend) {
  auto tally = parse_kernel_tally(
      "12\t1000\tvoid flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>>(Flash_fwd_params)\n"
      "3\t500\tvoid vllm::paged_attention_v1_kernel<unsigned short, unsigned short, 128, 16, 128, false>(unsigned short*)\n",
      "inline");
  ASSERT_TRUE(tally.ok());
  KernelSummary k = classify_kernels(*tally, vllm_signatures());
  EXPECT_EQ(k.launches_by_backend["FLASH_ATTN"], 12);
  LogScan none;
  none.attention_backends = vllm_signatures().attention_backends;
  VerdictInput in;
  in.log = &none;
  in.kernels = &k;
  in.expect_backend = "FLASH_ATTN";
  Verdict v = decide(in);
  EXPECT_EQ(v.activity, Activity::Active) << format_verdict(v);
  in.expect_backend = "FLASHINFER";
  v = decide(in);
  EXPECT_EQ(v.activity, Activity::NotActive) << format_verdict(v);
  in.expect_backend = "FLEX_ATTENTION";  // no kernel pattern: level 3 unavailable, no log: no evidence
  v = decide(in);
  EXPECT_EQ(v.activity, Activity::NoEvidence) << format_verdict(v);
}

using fp::testing::Ran;
Ran explain(std::vector<std::string> args) { return fp::testing::run_explain(std::move(args)); }

// Every row of fixtures/logs/vllm/expected.tsv: the exit code and a text the output must hold.
TEST(VllmExplain, EveryRecordedExcerptGetsItsExpectedVerdict) {
  std::ifstream in(fixture("logs/vllm/expected.tsv"));
  ASSERT_TRUE(in) << "missing fixtures/logs/vllm/expected.tsv";
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '\t');) f.push_back(cell);
    ASSERT_EQ(f.size(), 4u) << line;
    ++rows;
    Ran r = explain({"--runtime", "vllm", "--log", fixture("logs/vllm/" + f[0]), "--expect-backend", f[1]});
    EXPECT_EQ(r.code, std::stoi(f[2])) << f[0] << " expecting " << f[1] << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(f[3]), std::string::npos) << f[0] << " expecting " << f[1] << ": no " << quote(f[3]) << " in\n"
                                                    << r.out;
  }
  EXPECT_GE(rows, 12);
}

TEST(VllmExplain, UnknownBackendNameIsNoEvidenceNamingTheValidOnes) {
  Ran r = explain({"--runtime", "vllm", "--log", fixture("logs/vllm/v1_12529_flash_attn.log"), "--expect-backend", "CUDA0"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("\"CUDA0\" is not an attention backend of this runtime; valid: FLASH_ATTN"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fp
