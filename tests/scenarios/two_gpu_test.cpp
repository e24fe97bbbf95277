// Two GPUs, synthetic: the real H200 recording of `-fa on` (fixtures/logs/h200-live/fa_on.verbose)
// with its device names edited, and its kernel tally given a device column (probe v2), so the
// per-device verdict is tested on a machine with no GPU. Two layouts:
//   - layer split: layers 2 and 3 (node_86, node_117) placed on CUDA1, the rest on CUDA0
//     (llama.cpp's default -sm layer across two GPUs);
//   - everything on CUDA1 (-sm none -mg 1).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "evidence/causes.h"
#include "testing/recorded_runs.h"
#include "testing/run_explain.h"

namespace fp {
namespace {

using fp::testing::llama_signatures;

std::string live(const std::string& file) { return fp::testing::fixture("logs/h200-live/" + file); }

std::string read_text(const std::string& path) {
  auto t = read_file(path);
  EXPECT_TRUE(t.ok()) << path;
  return t ? *t : std::string();
}

// Layers 2 and 3 of every graph to CUDA1.
std::string layer_split_log() {
  static const std::regex node("(node_(?:86|117) \\([^)]*\\) \\[)CUDA0");
  return std::regex_replace(read_text(live("fa_on.verbose.log.gz")), node, "$1CUDA1");
}

// Everything to CUDA1.
std::string all_on_cuda1_log() {
  return std::regex_replace(read_text(live("fa_on.verbose.log.gz")), std::regex("CUDA0"), "CUDA1");
}

// The recorded tally with a device column: every kernel on each device in `devices` (launches
// halved on device 1, as a layer split of 2 layers in 4 would), probe v2 header.
std::string tally_on(const std::vector<int>& devices) {
  std::istringstream in(read_text(live("fa_on.verbose.kernels.tsv")));
  std::string out = "# flashproof-probe v2 status=ok state=final pid=1 cupti=130001 (synthetic: two GPUs)\n";
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    long long n = std::stoll(line.substr(0, t1)), ns = std::stoll(line.substr(t1 + 1, t2 - t1 - 1));
    for (int d : devices) {
      long long share = devices.size() > 1 && d == 1 ? 2 : 1;
      out += std::to_string(n / share) + "\t" + std::to_string(ns / share) + "\t" + std::to_string(d) + "\t" +
             line.substr(t2 + 1) + "\n";
    }
  }
  return out;
}

struct Synthetic {
  LogScan log;
  Placement placement;
  KernelSummary kernels;
};

Synthetic scan(const std::string& log_text, const std::string& tally_text) {
  const auto& sigs = llama_signatures();
  auto records = split_records(log_text, sigs);
  Synthetic s{scan_log(records, sigs), scan_placement(records, sigs), {}};
  auto tally = parse_kernel_tally(tally_text, "synthetic.tsv");
  EXPECT_TRUE(tally.ok()) << (tally ? "" : tally.error().message);
  if (tally) s.kernels = classify_kernels(*tally, sigs);
  return s;
}

Verdict decide_for(const Synthetic& s, const std::string& expect, bool with_kernels = true) {
  VerdictInput in = verdict_input(llama_signatures());
  in.log = &s.log;
  in.placement = &s.placement;
  in.kernels = with_kernels ? &s.kernels : nullptr;
  in.expect_backend = expect;
  in.model_layers = 4;
  return decide(in);
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(TwoGpus, LayerSplitIsActiveOnEachListedGpu) {
  Synthetic s = scan(layer_split_log(), tally_on({0, 1}));
  EXPECT_EQ(s.placement.fused_nodes, (std::map<std::string, int>{{"CUDA0", 38}, {"CUDA1", 38}}));
  EXPECT_EQ(s.kernels.fused_launches_by_device.size(), 2u);
  for (const char* expect : {"CUDA0,CUDA1", "CUDA1, CUDA0", "all-gpus"}) {
    Verdict v = decide_for(s, expect);
    EXPECT_EQ(v.activity, Activity::Active) << expect << "\n" << format_verdict(v);
    EXPECT_FALSE(v.disagreement) << expect << "\n" << format_verdict(v);
    EXPECT_EQ(v.levels_used, std::vector<int>({1, 2, 3})) << expect;
    EXPECT_TRUE(verdict_as_expected(v, true)) << expect;
  }
  Verdict v = decide_for(s, "CUDA0,CUDA1");
  EXPECT_TRUE(has(v.levels[1].summary, "76 of 76 FLASH_ATTN nodes on CUDA0,CUDA1")) << v.levels[1].summary;
  EXPECT_TRUE(has(v.levels[2].summary, "by device: CUDA0 160, CUDA1 80")) << v.levels[2].summary;
  EXPECT_EQ(v.fused_kernels_by_backend, (std::map<std::string, long long>{{"CUDA0", 160}, {"CUDA1", 80}}));
  EXPECT_TRUE(has(v.placement_completeness, "complete: 19 graphs, 4 attention nodes each")) << v.placement_completeness;
}

TEST(TwoGpus, LayerSplitWithOneGpuExpectedIsAFallbackOntoTheOther) {
  Synthetic s = scan(layer_split_log(), tally_on({0, 1}));
  for (const char* expect : {"CUDA0", "CUDA1"}) {
    Verdict v = decide_for(s, expect);
    EXPECT_EQ(v.activity, Activity::NotActive) << expect << "\n" << format_verdict(v);
    EXPECT_TRUE(v.partial_offload) << expect;
    EXPECT_FALSE(verdict_as_expected(v, true));
  }
}

TEST(TwoGpus, ListedGpuThatRanNothingIsNotActive) {
  // All on CUDA0, but CUDA0 and CUDA1 were both expected: not active on each.
  Synthetic s = scan(read_text(live("fa_on.verbose.log.gz")), tally_on({0}));
  Verdict v = decide_for(s, "CUDA0,CUDA1");
  EXPECT_EQ(v.activity, Activity::NotActive) << format_verdict(v);
  EXPECT_EQ(v.missing_backends, std::vector<std::string>({"CUDA1"}));
  EXPECT_TRUE(has(v.explanation, "not active on each of CUDA0,CUDA1: none on CUDA1")) << v.explanation;
}

TEST(TwoGpus, PlacementOnCuda1ButKernelsOnlyOnDevice0IsADisagreement) {
  Synthetic s = scan(layer_split_log(), tally_on({0}));
  Verdict v = decide_for(s, "CUDA0,CUDA1");
  EXPECT_TRUE(v.disagreement) << format_verdict(v);
  EXPECT_TRUE(has(v.disagreement_detail, "placement says 38 FLASH_ATTN nodes on CUDA1")) << v.disagreement_detail;
  EXPECT_TRUE(has(v.disagreement_detail, "0 fused attention kernel launches on device 1")) << v.disagreement_detail;
  EXPECT_TRUE(v.measured_disagreement);
  EXPECT_FALSE(verdict_as_expected(v, true));
}

TEST(TwoGpus, AllOnCuda1WithCuda0ExpectedIsNotActiveAtEveryLevel) {
  // The case: -sm none -mg 1 with CUDA0 expected; level 3 once said "active on CUDA0".
  Synthetic s = scan(all_on_cuda1_log(), tally_on({1}));
  Verdict v = decide_for(s, "CUDA0");
  EXPECT_EQ(v.activity, Activity::NotActive) << format_verdict(v);
  EXPECT_EQ(v.levels[1].any_on_expected, std::optional<bool>(false));
  EXPECT_EQ(v.levels[2].any_on_expected, std::optional<bool>(false)) << v.levels[2].summary;
  EXPECT_TRUE(has(v.levels[2].summary, "by device: CUDA1 160; none on CUDA0")) << v.levels[2].summary;
  EXPECT_TRUE(v.silent_fallback);
  Verdict right = decide_for(s, "CUDA1");
  EXPECT_EQ(right.activity, Activity::Active) << format_verdict(right);
}

TEST(TwoGpus, OldTallyWithoutDevicesSaysTheDeviceIsUnknown) {
  const auto& sigs = llama_signatures();
  auto records = split_records(layer_split_log(), sigs);
  Synthetic s{scan_log(records, sigs), scan_placement(records, sigs), {}};
  auto tally = read_kernel_tally(live("fa_on.verbose.kernels.tsv"));
  ASSERT_TRUE(tally.ok());
  s.kernels = classify_kernels(*tally, sigs);
  Verdict v = decide_for(s, "CUDA0,CUDA1");
  EXPECT_EQ(v.activity, Activity::Active) << format_verdict(v);
  EXPECT_TRUE(has(v.levels[2].summary, "the tally has no device column")) << v.levels[2].summary;
}

TEST(TwoGpus, ExplainTakesAListOfBackends) {
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(write_file_atomic(dir + "two_gpu.log", layer_split_log()).ok());
  ASSERT_TRUE(write_file_atomic(dir + "two_gpu.kernels.tsv", tally_on({0, 1})).ok());
  ASSERT_TRUE(write_file_atomic(dir + "two_gpu_dev0.kernels.tsv", tally_on({0})).ok());
  auto explain = [&](const std::string& tally, const std::string& expect) {
    return fp::testing::run_explain({"--runtime", "llama-server", "--log", dir + "two_gpu.log", "--kernels", dir + tally,
                                     "--expect-backend", expect, "--layers", "4"});
  };
  auto both = explain("two_gpu.kernels.tsv", "CUDA0,CUDA1");
  EXPECT_EQ(both.code, 0) << both.out << both.err;
  EXPECT_TRUE(has(both.out, "fused kernels ran on: CUDA0 160, CUDA1 80")) << both.out;
  auto all = explain("two_gpu.kernels.tsv", "all-gpus");
  EXPECT_EQ(all.code, 0) << all.out << all.err;
  EXPECT_TRUE(has(all.out, "expected backend: CUDA0,CUDA1 (all-gpus")) << all.out;
  auto one = explain("two_gpu.kernels.tsv", "CUDA0");
  EXPECT_EQ(one.code, 1) << one.out;
  EXPECT_TRUE(has(one.out, "only partly on CUDA0: partial offload")) << one.out;
  auto dev0 = explain("two_gpu_dev0.kernels.tsv", "CUDA0,CUDA1");
  EXPECT_EQ(dev0.code, 1) << dev0.out;
  EXPECT_TRUE(has(dev0.out, "DISAGREEMENT: placement says 38 FLASH_ATTN nodes on CUDA1")) << dev0.out;
}

// The real thing, recorded on two H200s (device kind nvidia-h200-x2, tests/gpu/llama-cuda/
// two_gpu_device.sh, fixtures/logs/h200-x2-live/): Debian's CUDA backend with llama.cpp's default
// layer split (-ngl 99), and with everything on the second GPU (-sm none -mg 1).
std::string x2(const std::string& file) { return fp::testing::fixture("logs/h200-x2-live/" + file); }

// The cause rules that name the fact: which rules of the runtime data match this verdict and log.
std::vector<std::string> causes_for(const std::string& log_text, const Verdict& v) {
  const auto& sigs = llama_signatures();
  auto records = split_records(log_text, sigs);
  Facts facts = gather_facts(verdict_facts(v), {}, records, sigs.causes);
  std::vector<std::string> names;
  for (const auto& c : match_causes(sigs.causes, facts, records)) names.push_back(c.rule);
  return names;
}

TEST(TwoGpusLive, DefaultLayerSplitIsActiveOnBothAndAFallbackForEitherAlone) {
  Synthetic s = scan(read_text(x2("fa_on.verbose.log.gz")), read_text(x2("fa_on.verbose.kernels.tsv")));
  EXPECT_EQ(s.placement.fused_nodes, (std::map<std::string, int>{{"CUDA0", 57}, {"CUDA1", 19}}));
  for (const char* expect : {"CUDA0,CUDA1", "all-gpus"}) {
    Verdict v = decide_for(s, expect);
    EXPECT_EQ(v.activity, Activity::Active) << expect << "\n" << format_verdict(v);
    EXPECT_FALSE(v.disagreement) << format_verdict(v);
    EXPECT_EQ(v.fused_kernels_by_backend, (std::map<std::string, long long>{{"CUDA0", 120}, {"CUDA1", 40}}));
  }
  for (const char* expect : {"CUDA0", "CUDA1"}) {
    Verdict v = decide_for(s, expect);
    EXPECT_EQ(v.activity, Activity::NotActive) << expect << "\n" << format_verdict(v);
    EXPECT_TRUE(v.partial_offload) << expect;
    EXPECT_EQ(causes_for(read_text(x2("fa_on.verbose.log.gz")), v), std::vector<std::string>{"multi_gpu_layer_split"});
  }
}

TEST(TwoGpusLive, AllOnTheSecondGpuIsActiveThereAndNotOnTheFirstAtEveryLevel) {
  Synthetic s = scan(read_text(x2("fa_on_sm_none_mg1.verbose.log.gz")), read_text(x2("fa_on_sm_none_mg1.verbose.kernels.tsv")));
  Verdict on1 = decide_for(s, "CUDA1");
  EXPECT_EQ(on1.activity, Activity::Active) << format_verdict(on1);
  EXPECT_EQ(on1.fused_kernels_by_backend, (std::map<std::string, long long>{{"CUDA1", 160}}));
  Verdict on0 = decide_for(s, "CUDA0");
  EXPECT_EQ(on0.activity, Activity::NotActive) << format_verdict(on0);
  EXPECT_EQ(on0.levels[1].any_on_expected, std::optional<bool>(false));
  EXPECT_EQ(on0.levels[2].any_on_expected, std::optional<bool>(false)) << on0.levels[2].summary;
  EXPECT_FALSE(verdict_as_expected(on0, true));
  EXPECT_EQ(causes_for(read_text(x2("fa_on_sm_none_mg1.verbose.log.gz")), on0),
            std::vector<std::string>{"model_on_another_gpu"});
}

}  // namespace
}  // namespace fp
