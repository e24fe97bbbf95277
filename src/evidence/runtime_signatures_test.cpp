#include "evidence/runtime_signatures.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "runtime/runtime_data.h"
#include "testing/recorded_runs.h"

namespace fp {
namespace {

using fp::testing::llama_signatures;

std::vector<const Rule*> all_rules(const RuntimeSignatures& s) {
  std::vector<const Rule*> out;
  for (const auto* section : {&s.log, &s.placement, &s.kernels})
    for (const auto& r : *section) out.push_back(&r);
  if (s.device_timings)
    for (const Rule* r : {&s.device_timings->block, &s.device_timings->end, &s.device_timings->op, &s.device_timings->devices,
                          &s.device_timings->backend})
      out.push_back(r);
  return out;
}

TEST(RuntimeSignatures, LlamaServerFileLoads) {
  auto r = load_runtime_signatures("llama-server");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->runtime, "llama-server");
  EXPECT_GE(r->log.size(), 14u);
  EXPECT_EQ(r->placement.size(), 6u);  // nodes, split headers and three device listings
  EXPECT_EQ(r->kernels.size(), 11u);  // five families, the catch-all, soft_max; Vulkan's two ops; two conversion kernels
  ASSERT_TRUE(r->device_timings.has_value());
  EXPECT_EQ(r->device_timings->env.at("GGML_VK_PERF_LOGGER"), "1");
  ASSERT_TRUE(r->record_prefix.has_value());
  EXPECT_EQ(r->hints.count("placement"), 1u);
}

// Iterates the data file: a pattern added without a matching sample line fails here.
TEST(RuntimeSignatures, EveryRuleMatchesItsExamplesAndNotItsCounterExamples) {
  const auto& sigs = llama_signatures();
  RegexMatch m;
  for (const Rule* rule : all_rules(sigs)) {
    ASSERT_FALSE(rule->examples.empty()) << rule->name;
    for (const auto& ex : rule->examples) {
      EXPECT_TRUE(rule_search(*rule, ex, m)) << "rule " << rule->name << " misses its example " << quote(ex);
      for (const auto& [role, group] : rule->captures) {
        if (role != "batch" && role != "reason" && role != "state") {
          EXPECT_TRUE(m[group].matched) << rule->name << " capture " << role << " empty in " << quote(ex);
        }
      }
      if (rule->captures.count("state") && !rule->states.empty()) {
        EXPECT_EQ(rule->states.count(capture(*rule, m, "state")), 1u)
            << rule->name << ": captured state " << quote(capture(*rule, m, "state")) << " not in states";
      }
    }
    for (const auto& ex : rule->counter_examples)
      EXPECT_FALSE(rule_search(*rule, ex, m)) << "rule " << rule->name << " matches counter example " << quote(ex);
  }
}

TEST(RuntimeSignatures, RecordPrefixMatchesAtStartOfItsExamples) {
  const auto& sigs = llama_signatures();
  ASSERT_TRUE(sigs.record_prefix);
  RegexMatch m;
  for (const auto& ex : sigs.record_prefix->examples) {
    ASSERT_TRUE(regex_search(ex, sigs.record_prefix->regex, m)) << ex;
    EXPECT_EQ(m.position(0), 0) << ex;
  }
  for (const auto& ex : sigs.record_prefix->counter_examples)
    EXPECT_FALSE(regex_search(ex, sigs.record_prefix->regex, m)) << ex;
}

TEST(RuntimeSignatures, EveryKindOfTheBriefIsCovered) {
  std::set<RuleKind> kinds;
  for (const Rule* r : all_rules(llama_signatures())) kinds.insert(r->kind);
  for (RuleKind k : {RuleKind::Requested, RuleKind::Decision, RuleKind::Reason, RuleKind::Fatal,
                     RuleKind::GraphSplits, RuleKind::GraphNodes, RuleKind::KvBuffer, RuleKind::KvTotal,
                     RuleKind::ComputeBuffer, RuleKind::FusedNode, RuleKind::UnfusedNode, RuleKind::Split,
                     RuleKind::FusedKernel, RuleKind::UnfusedKernel})
    EXPECT_EQ(kinds.count(k), 1u) << to_string(k);
}

const char* kMinimal = R"json({"adapter": {"anything": 1}, "evidence": {
  "log": [{"name": "req", "kind": "requested", "pattern": "fa = (on|off)", "captures": {"state": 1},
           "states": {"on": true, "off": false}, "comment": "c", "examples": ["fa = on"]}],
  "kernels": [{"name": "k", "kind": "fused_kernel", "pattern": "^fa_", "comment": "c", "examples": ["fa_x"]}]}})json";

TEST(RuntimeSignatures, ToleratesOtherTopLevelKeysAndOptionalPlacement) {
  auto r = parse_runtime_signatures(kMinimal, "x.json", "x");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->placement.empty());
  EXPECT_FALSE(r->record_prefix.has_value());
}

std::string broken(const std::string& from, const std::string& to) {
  std::string s = kMinimal;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(RuntimeSignatures, BadRegexNamesFileKeyAndValue) {
  auto r = parse_runtime_signatures(broken("fa = (on|off)", "fa = (on|off"), "bad.json", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("bad.json"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("evidence.log[0].pattern"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("fa = (on|off"), std::string::npos) << r.error().message;
}

TEST(RuntimeSignatures, UnknownKeysAreErrors) {
  auto a = parse_runtime_signatures(broken("\"comment\": \"c\", \"examples\": [\"fa = on\"]",
                                           "\"comment\": \"c\", \"exampels\": [\"fa = on\"]"),
                                    "bad.json", "x");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("\"exampels\""), std::string::npos) << a.error().message;
  auto b = parse_runtime_signatures(broken("\"kernels\":", "\"kernals\":"), "bad.json", "x");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("kernals"), std::string::npos) << b.error().message;
}

TEST(RuntimeSignatures, RejectsKindOfOtherSectionCaptureOutOfRangeAndMissingAnswer) {
  auto kind = parse_runtime_signatures(broken("\"kind\": \"fused_kernel\"", "\"kind\": \"fused_node\""), "b.json", "x");
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message.find("evidence.kernels[0].kind"), std::string::npos) << kind.error().message;
  auto cap = parse_runtime_signatures(broken("{\"state\": 1}", "{\"state\": 2}"), "b.json", "x");
  ASSERT_FALSE(cap.ok());
  EXPECT_NE(cap.error().message.find("captures.state"), std::string::npos) << cap.error().message;
  auto ans = parse_runtime_signatures(broken("\"states\": {\"on\": true, \"off\": false}, ", ""), "b.json", "x");
  ASSERT_FALSE(ans.ok());
  EXPECT_NE(ans.error().message.find("states"), std::string::npos) << ans.error().message;
  auto ex = parse_runtime_signatures(broken("\"examples\": [\"fa_x\"]", "\"examples\": []"), "b.json", "x");
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.error().message.find("evidence.kernels[0].examples"), std::string::npos) << ex.error().message;
}

// The shipped llama-server data with one text replaced, parsed: what a wrong edit of it is told.
Result<RuntimeSignatures> shipped_llama_with(const std::string& from, const std::string& to) {
  std::ifstream in(std::string(FLASHPROOF_SOURCE_DIR) + "/src/runtime/data/llama-server.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return parse_runtime_signatures(text, "llama-server.json", "llama-server");
}

TEST(RuntimeSignatures, KernelsReadingAFixedPairAndTheHeadSizesOfTheVectorKernel) {
  const RuntimeSignatures& s = llama_signatures();
  ASSERT_TRUE(s.degraded_kernels.has_value());
  EXPECT_EQ(s.degraded_kernels->vector_head_sizes, (std::vector<int>{64, 128, 256}));
  for (const auto& r : s.kernels)
    if (r.name == "fattn_mma" || r.name == "fattn_tile" || r.name == "fattn_wmma")
      EXPECT_EQ(r.reads_kv, "f16-f16") << r.name;
    else
      EXPECT_EQ(r.reads_kv, "") << r.name;

  auto pair = shipped_llama_with("\"reads_kv\": \"f16-f16\"", "\"reads_kv\": \"f16\"");
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(pair.error().message.find("reads_kv: value \"f16\" is not a K-V type pair"), std::string::npos) << pair.error().message;
  auto vec = shipped_llama_with("\"name\": \"fattn_vec\",", "\"name\": \"fattn_vec\", \"reads_kv\": \"f16-f16\",");
  ASSERT_FALSE(vec.ok());
  EXPECT_NE(vec.error().message.find("without a \"k_type\" or \"v_type\" capture only"), std::string::npos) << vec.error().message;
  auto sizes = shipped_llama_with("\"vector_head_sizes\": [64, 128, 256]", "\"vector_head_sizes\": [64, \"128\"]");
  ASSERT_FALSE(sizes.ok());
  EXPECT_NE(sizes.error().message.find("evidence.degraded_kernels.vector_head_sizes: value "), std::string::npos) << sizes.error().message;
  EXPECT_NE(sizes.error().message.find("128"), std::string::npos) << sizes.error().message;
  EXPECT_NE(sizes.error().message.find("is not a head size, a whole number 1..4096"), std::string::npos) << sizes.error().message;
}

TEST(RuntimeSignatures, DataDirFromEnvironment) {
  std::string dir = ::testing::TempDir() + "fp_sig_env";
  std::string cmd = "mkdir -p '" + dir + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ofstream(dir + "/toy.json") << kMinimal;
  setenv("FLASHPROOF_DATA_DIR", dir.c_str(), 1);
  auto r = load_runtime_signatures("toy");
  auto missing = load_runtime_signatures("nosuch");
  unsetenv("FLASHPROOF_DATA_DIR");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, dir + "/toy.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nosuch"), std::string::npos) << missing.error().message;
  EXPECT_FALSE(load_runtime_signatures("../etc/x").ok());
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

TEST(RuntimeSignatures, GpuBackendMapsNamesToProbeDevices) {
  const auto& sigs = fp::testing::llama_signatures();
  ASSERT_TRUE(sigs.gpu_backend.has_value());
  RegexMatch m;
  for (const auto& ex : sigs.gpu_backend->examples) EXPECT_TRUE(rule_search(*sigs.gpu_backend, ex, m)) << ex;
  for (const auto& ex : sigs.gpu_backend->counter_examples) EXPECT_FALSE(rule_search(*sigs.gpu_backend, ex, m)) << ex;
  EXPECT_EQ(sigs.gpu_backend_name(1), "CUDA1");
  auto bad = parse_runtime_signatures(R"({"evidence": {"gpu_backend": {"pattern": "^CUDA\\d+$", "name_format": "CUDA{device}",
      "comment": "c", "examples": ["CUDA0"]}, "log": [], "kernels": []}})",
                                      "g.json", "g");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("g.json: evidence.gpu_backend.pattern"), std::string::npos) << bad.error().message;
}

TEST(RuntimeSignatures, SameAsNeedsALoader) {
  auto r = parse_runtime_signatures(R"({"evidence": {"comment": "c", "same_as": "llama-server"}})", "s.json", "s");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no loader was given"), std::string::npos) << r.error().message;
  auto loaded = load_runtime_signatures("openai-compatible-llama-server");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_FALSE(loaded->causes.rules.empty());
}

}  // namespace
}  // namespace fp
