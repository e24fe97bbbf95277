#include "evidence/causes.h"

#include <gtest/gtest.h>

#include "evidence/log_records.h"
#include "runtime/runtime_data.h"
#include "testing/recorded_runs.h"
#include "testing/run_explain.h"

namespace fp {
namespace {

using fp::testing::fixture;
using fp::testing::llama_signatures;

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

const RuntimeSignatures& vllm_signatures() {
  static const RuntimeSignatures sigs = [] {
    auto r = load_runtime_signatures("vllm");
    if (!r) ADD_FAILURE() << r.error().message;
    return r ? *r : RuntimeSignatures{};
  }();
  return sigs;
}

std::vector<LogRecord> records_of(const std::vector<std::string>& lines, const RuntimeSignatures& sigs) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return split_records(text, sigs);
}

std::vector<std::string> matched_rules(const RuntimeSignatures& sigs, const CauseExample& ex) {
  auto records = records_of(ex.log, sigs);
  Facts facts = gather_facts(ex.facts, {}, records, sigs.causes);
  std::vector<std::string> names;
  for (const auto& f : match_causes(sigs.causes, facts, records)) names.push_back(f.rule);
  return names;
}

// Iterates the data files: a rule added without a sample it matches, or matching its counter
// example, fails here.
TEST(Causes, EveryRuleMatchesItsExamplesAndNotItsCounterExamples) {
  for (const RuntimeSignatures* sigs : {&llama_signatures(), &vllm_signatures()}) {
    ASSERT_FALSE(sigs->causes.rules.empty()) << sigs->runtime;
    for (const auto& rule : sigs->causes.rules) {
      ASSERT_FALSE(rule.examples.empty()) << rule.name;
      for (const auto& ex : rule.examples) {
        auto names = matched_rules(*sigs, ex);
        EXPECT_NE(std::find(names.begin(), names.end(), rule.name), names.end())
            << sigs->runtime << ": rule " << rule.name << " does not match its example (log: " << join(ex.log, " | ") << ")";
      }
      for (const auto& ex : rule.counter_examples) {
        auto names = matched_rules(*sigs, ex);
        EXPECT_EQ(std::find(names.begin(), names.end(), rule.name), names.end())
            << sigs->runtime << ": rule " << rule.name << " matches its counter example (log: " << join(ex.log, " | ") << ")";
      }
    }
  }
}

TEST(Causes, FactsFromTheLaunchLine) {
  const auto& rules = llama_signatures().causes;
  Facts f = facts_from_argv({"llama-server", "-m", "m.gguf", "-ngl", "2", "-ctk", "q5_1", "--cache-type-v=q4_0", "-fa", "on"}, rules);
  EXPECT_EQ(f["gpu_layers"], "2");
  EXPECT_EQ(f["cache_type_k"], "q5_1");
  EXPECT_EQ(f["cache_type_v"], "q4_0");
  EXPECT_EQ(f["flag"], "on");
  Facts d = gather_facts({}, {"llama-server"}, {}, rules);
  EXPECT_EQ(d["cache_type_k"], "f16");  // the runtime's default when nothing says otherwise
}

TEST(Causes, NothingFitsIsNoKnownCauseNamingTheFacts) {
  const auto& sigs = llama_signatures();
  Facts facts = {{"expected_backend", "CUDA0"}, {"head_size", "128"}, {"cache_type_k", "f16"}, {"cache_type_v", "f16"}};
  auto records = records_of({"llama_kv_cache:      CUDA0 KV buffer size =    16.00 MiB"}, sigs);
  auto found = match_causes(sigs.causes, facts, records);
  EXPECT_TRUE(found.empty());
  EXPECT_EQ(causes_text(found, facts),
            "no known cause (facts: K cache f16; V cache f16; expected backend CUDA0; head size 128)");
}

// The real recordings: the live H200 head-size-48 fallback (Debian 0.27.0), the May 2026 q5_1
// fallback, and a CPU-only build expected on CUDA0.
std::vector<CauseFinding> causes_of(const std::string& dir, const std::string& name, const Facts& known,
                                    const std::vector<std::string>& argv = {}) {
  const auto& sigs = llama_signatures();
  const auto& run = fp::testing::load_run_log_only(dir, name);
  return match_causes(sigs.causes, gather_facts(known, argv, run.records, sigs.causes), run.records);
}

TEST(Causes, LiveH200HeadSize48) {
  auto found = causes_of("h200-live", "hd48_fa_on.verbose", {{"expected_backend", "CUDA0"}},
                         {"llama-server", "-m", "hd48.gguf", "-ngl", "99", "-fa", "on"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "cuda_fa_head_size");
  EXPECT_EQ(found[0].facts, "head size 48; K cache f16");
  EXPECT_TRUE(has(found[0].text(), "ggml-cuda has no Flash Attention kernel for head size 48 in this build")) << found[0].text();
  EXPECT_TRUE(has(found[0].remedy, "-fa auto turns it off openly")) << found[0].remedy;
  EXPECT_TRUE(has(found[0].remedy, "40,64,72,80,96,112,128,256")) << found[0].remedy;
  // -fa auto: turned off openly, and the head size still named.
  auto autos = causes_of("h200-live", "hd48_fa_auto.verbose", {{"expected_backend", "CUDA0"}});
  std::vector<std::string> names;
  for (const auto& f : autos) names.push_back(f.rule);
  EXPECT_EQ(names, (std::vector<std::string>{"cuda_fa_head_size", "auto_resolved_off"}));
}

// Attach mode and `explain` without --model: the head size is the server's own print_info line.
TEST(Causes, HeadSizeFromTheLogWithoutTheModel) {
  const auto& sigs = llama_signatures();
  EXPECT_EQ(head_size_from_log(records_of({"0.00.310.487 I print_info: n_embd_head_k         = 96",
                                           "0.00.330.791 I llama_kv_cache: n_rot_k = 96, n_embd_head_k_all = 96"},
                                          sigs),
                               sigs.causes),
            96);
  EXPECT_EQ(head_size_from_log(records_of({"0.00.310.487 I print_info: n_embd_head_k         = 1234567"}, sigs), sigs.causes), 0);
  EXPECT_EQ(head_size_from_log(records_of({"main: server is listening on http://127.0.0.1:8080"}, sigs), sigs.causes), 0);
}

TEST(Causes, H200MayBuildQ5_1Cache) {
  auto found = causes_of("h200", "mid_fa_on_q5_1", {{"expected_backend", "CUDA0"}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "cuda_fa_kv_types");
  EXPECT_EQ(found[0].facts, "K cache q5_1; V cache q5_1; head size 128");
}

TEST(Causes, CpuOnlyBuildExpectedOnCuda0) {
  auto found = causes_of("cpu", "b11669_tiny_fa_on_sched_debug", {{"expected_backend", "CUDA0"}, {"build", "11669"}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "cpu_only_build");
  EXPECT_EQ(found[0].facts, "expected backend CUDA0; build 11669");
  EXPECT_TRUE(causes_of("cpu", "b11669_tiny_fa_on_sched_debug", {{"expected_backend", "CPU"}}).empty());
}

TEST(Causes, PartialOffloadFromTheLaunchAndTheModel) {
  auto found = causes_of("h200-live", "fa_on.verbose", {{"expected_backend", "CUDA0"}, {"layers", "4"}},
                         {"llama-server", "-ngl", "2"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "partial_offload");
  EXPECT_TRUE(has(found[0].facts, "-ngl 2; layers 4")) << found[0].facts;
}

TEST(Causes, VllmRecordedLogs) {
  struct Want {
    const char* log;
    const char* rule;
    const char* facts;
  };
  for (const Want& w : std::vector<Want>{{"v0_16808_head_size_88.log", "vllm_fa_head_size", "head size 88"},
                                         {"v1_flex_fallback_head_size.log", "vllm_fa_head_size", "head size 88"},
                                         {"v0_lmcache412_t4_xformers.log", "vllm_pre_ampere_gpu", ""},
                                         {"v0_llamafactory5050_fa_package_missing.log", "vllm_fa_package_missing", ""}}) {
    auto text = read_file(fixture(std::string("logs/vllm/") + w.log));
    ASSERT_TRUE(text.ok()) << w.log;
    const auto& sigs = vllm_signatures();
    auto records = split_records(*text, sigs);
    auto found = match_causes(sigs.causes, gather_facts({}, {}, records, sigs.causes), records);
    ASSERT_EQ(found.size(), 1u) << w.log;
    EXPECT_EQ(found[0].rule, w.rule) << w.log;
    EXPECT_EQ(found[0].facts, w.facts) << w.log;
  }
  // fp8 KV cache from the launch line.
  const auto& sigs = vllm_signatures();
  auto found = match_causes(sigs.causes, facts_from_argv({"vllm", "serve", "m", "--kv-cache-dtype", "fp8"}, sigs.causes), {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "vllm_fp8_kv_cache");
  EXPECT_EQ(found[0].facts, "KV cache dtype fp8");
}

TEST(Causes, ExplainNamesTheCauseAndTheRemedy) {
  const std::string base = fixture("logs/h200-live/hd48_fa_on.verbose");
  auto r = fp::testing::run_explain({"--runtime", "llama-server", "--log", base + ".log.gz", "--kernels", base + ".kernels.tsv",
                                     "--expect-backend", "CUDA0"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "likely cause: head size 48; K cache f16: ggml-cuda has no Flash Attention kernel for head size 48 in "
                         "this build, so the scheduler places FLASH_ATTN on the CPU. Remedy: -fa auto turns it off openly"))
      << r.out;
  auto ok = fp::testing::run_explain({"--runtime", "llama-server", "--log", fixture("logs/h200-live/fa_on.verbose.log.gz"),
                                      "--expect-backend", "CUDA0"});
  EXPECT_EQ(ok.code, 0);
  EXPECT_FALSE(has(ok.out, "likely cause")) << ok.out;
}

TEST(Causes, NotMultipleOfTakesWholeNumbersOnly) {
  auto rules = parse_cause_rules(nlohmann::json::parse(R"({"rules": [{"name": "x", "cause": "c", "remedy": "r", "comment": "c",
      "when": {"fact_not_multiple_of": {"head_size": 8}}, "examples": [{"facts": {"head_size": "36"}}]}]})"),
                                 "f.json: evidence.causes");
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  auto names = [&](const Facts& f) {
    std::vector<std::string> out;
    for (const auto& c : match_causes(*rules, f, {})) out.push_back(c.rule);
    return out;
  };
  EXPECT_EQ(names({{"head_size", "36"}}), std::vector<std::string>{"x"});
  EXPECT_TRUE(names({{"head_size", "48"}}).empty());
  EXPECT_TRUE(names({{"head_size", "36.5"}}).empty());  // not a whole number: proves nothing
  EXPECT_TRUE(names({{"head_size", "n/a"}}).empty());
  EXPECT_TRUE(names({}).empty());
  auto bad = parse_cause_rules(nlohmann::json::parse(R"({"rules": [{"name": "x", "cause": "c", "remedy": "r", "comment": "c",
      "when": {"fact_not_multiple_of": {"head_size": 0}}, "examples": [{}]}]})"),
                               "f.json: evidence.causes");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.error().message, "f.json: evidence.causes.rules[0].when.fact_not_multiple_of.head_size: value"))
      << bad.error().message;
  EXPECT_TRUE(has(bad.error().message, "0\" is not a whole number of 2 or more")) << bad.error().message;
}

TEST(Causes, BadRulesNameTheField) {
  auto bad = parse_cause_rules(nlohmann::json::parse(R"({"rules": [{"name": "x", "cause": "c", "remedy": "r", "comment": "c",
      "when": {"fact_below": {"gpu_layers": true}}, "examples": [{}]}]})"),
                               "f.json: evidence.causes");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.error().message, "f.json: evidence.causes.rules[0].when.fact_below.gpu_layers")) << bad.error().message;
  auto noex = parse_cause_rules(nlohmann::json::parse(R"({"rules": [{"name": "x", "cause": "c", "remedy": "r", "comment": "c",
      "when": {"log": "x"}}]})"),
                                "f.json: evidence.causes");
  ASSERT_FALSE(noex.ok());
  EXPECT_TRUE(has(noex.error().message, "examples: missing")) << noex.error().message;
}

}  // namespace
}  // namespace fp
