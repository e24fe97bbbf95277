// Backend names as ggml's scheduler prints them (cut to five characters), from real log lines: the
// Vulkan runs on lavapipe (fixtures/logs/vulkan), and the H200 recording of `-fa on`
// (fixtures/logs/h200-live/fa_on.verbose) given a synthetic device list of 16 CUDA devices with its
// backend moved to CUDA12, which the scheduler prints as "CUDA1".
#include "evidence/backend_names.h"
#include "testing/recorded_runs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>


namespace fp {
namespace {

using fp::testing::fixture;
using fp::testing::llama_signatures;

std::string read_text(const std::string& path) {
  auto t = read_file(path);
  EXPECT_TRUE(t.ok()) << path;
  return t ? *t : std::string();
}

std::string vulkan_log(const std::string& name) { return read_text(fixture("logs/vulkan/b11669_tiny_lavapipe_" + name + ".log.gz")); }

// Records without the scheduler's split headers (a log cut before them, or a format without them).
std::string without_split_headers(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find("## SPLIT #");
    out += (at == std::string::npos ? line : line.substr(0, at)) + "\n";
  }
  return out;
}

// The H200 run on CUDA12 of a box with 16 CUDA devices: the device list names CUDA0..CUDA15, the split
// headers, buffers and inputs say CUDA12, the node records print the cut "CUDA1".
std::string sixteen_gpu_log() {
  std::string text = read_text(fixture("logs/h200-live/fa_on.verbose.log.gz"));
  text = std::regex_replace(text, std::regex("\\[CUDA0 "), "[CUDA1 ");  // the node records' "%5.5s"
  text = std::regex_replace(text, std::regex("CUDA0"), "CUDA12");
  std::string devices;
  for (int d = 0; d < 16; ++d)
    devices += "0.00.793.897 I cmn  common_param:   - CUDA" + std::to_string(d) + std::string(d < 10 ? "   " : "  ") +
               ": NVIDIA H200 (143155 MiB, 142617 MiB free)\n";
  return std::regex_replace(text, std::regex("[^\n]*common_param:   - CUDA12 [^\n]*\n"), devices);
}

Placement placement_of(const std::string& text) {
  const auto& sigs = llama_signatures();
  return scan_placement(split_records(text, sigs), sigs);
}

TEST(BackendNames, CutAsTheSchedulerPrintsThem) {
  EXPECT_EQ(cut_backend_name("Vulkan0", 5), "Vulka");
  EXPECT_EQ(cut_backend_name("CUDA10", 5), "CUDA1");
  EXPECT_EQ(cut_backend_name("CUDA1", 5), "CUDA1");
  EXPECT_EQ(cut_backend_name("RPC[10.0.0.2:50052]", 5), "RPC[1");
  EXPECT_EQ(cut_backend_name("CPU", 5), "CPU");
  EXPECT_EQ(cut_backend_name("Vulkan0", 0), "Vulkan0");
}

TEST(BackendNames, ResolvedBySplitHeaderThenByTheOnlyFit) {
  RunBackends b(5);
  for (const char* n : {"CPU", "Vulkan0", "Vulkan1", "CUDA0", "RPC[10.0.0.2:50052]"}) b.add(n);
  EXPECT_EQ(b.resolve("CPU", "").name, "CPU");
  EXPECT_EQ(b.resolve("CUDA0", "").name, "CUDA0");
  EXPECT_EQ(b.resolve("RPC[1", "").name, "RPC[10.0.0.2:50052]");
  EXPECT_EQ(b.resolve("RPC[1", "").how, "device list");
  BackendName two = b.resolve("Vulka", "");
  EXPECT_TRUE(two.ambiguous());
  EXPECT_EQ(two.candidates, (std::vector<std::string>{"Vulkan0", "Vulkan1"}));
  BackendName by_split = b.resolve("Vulka", "Vulkan1");
  EXPECT_EQ(by_split.name, "Vulkan1");
  EXPECT_EQ(by_split.how, "split header");
  // A split header whose name does not cut to the printed one says nothing about the node.
  EXPECT_TRUE(b.resolve("Vulka", "CUDA0").ambiguous());
  // Nothing to resolve against: the name stays as printed.
  EXPECT_EQ(RunBackends(5).resolve("Vulka", "").name, "Vulka");
}

TEST(BackendNames, CandidatesShortenedToRanges) {
  EXPECT_EQ(candidates_text({"CUDA1", "CUDA10", "CUDA11", "CUDA12", "CUDA13", "CUDA14", "CUDA15"}), "CUDA1, CUDA10..CUDA15");
  EXPECT_EQ(candidates_text({"Vulkan0", "Vulkan1"}), "Vulkan0, Vulkan1");
}

TEST(BackendNames, LavapipeRunCountsVulkan0) {
  Placement p = placement_of(vulkan_log("fa_on"));
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"Vulkan0", 30}}));
  EXPECT_TRUE(p.ambiguous.empty());
  EXPECT_EQ(p.backends.names(), (std::vector<std::string>{"Vulkan0", "CPU"}));
  EXPECT_EQ(p.names_text(), "the scheduler prints backend names cut to 5 characters: \"Vulka\" is Vulkan0 (split header)");
  // Without split headers the device list alone resolves it: lavapipe is the run's only Vulkan device.
  Placement q = placement_of(without_split_headers(vulkan_log("fa_on")));
  EXPECT_EQ(q.fused_nodes, (std::map<std::string, int>{{"Vulkan0", 30}}));
  EXPECT_EQ(q.names_text(), "the scheduler prints backend names cut to 5 characters: \"Vulka\" is Vulkan0 (device list)");
}

TEST(BackendNames, TwoVulkanDevicesWithoutSplitHeadersCannotBeToldApart) {
  std::string text = std::regex_replace(
      without_split_headers(vulkan_log("fa_on")), std::regex("(([^\n]*common_param:   - )Vulkan0 : [^\n]*\n)"),
      "$1$2Vulkan1 : AMD Radeon RX 7900 XTX (RADV NAVI31) (24560 MiB, 24000 MiB free)\n");
  Placement p = placement_of(text);
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"Vulka?", 30}}));
  EXPECT_EQ(p.ambiguous.at("Vulka?"), (std::vector<std::string>{"Vulkan0", "Vulkan1"}));
  VerdictInput in = verdict_input(llama_signatures());
  in.placement = &p;
  in.expect_backend = "Vulkan0";
  Verdict v = decide(in);
  EXPECT_FALSE(v.levels[1].used);
  EXPECT_NE(v.levels[1].unavailable_why.find("cannot tell the backends apart: 30 FLASH_ATTN nodes on \"Vulka\", which may "
                                             "be any of Vulkan0, Vulkan1"),
            std::string::npos)
      << v.levels[1].unavailable_why;
  EXPECT_EQ(v.activity, Activity::NoEvidence);
}

TEST(BackendNames, SixteenCudaDevicesResolvedBySplitHeaders) {
  Placement p = placement_of(sixteen_gpu_log());
  ASSERT_EQ(p.backends.names().size(), 17u);  // CUDA0..CUDA15 and CPU
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"CUDA12", 76}}));
  EXPECT_TRUE(p.ambiguous.empty());
  VerdictInput in = verdict_input(llama_signatures());
  in.placement = &p;
  in.expect_backend = "CUDA12";
  Verdict v = decide(in);
  EXPECT_TRUE(v.levels[1].active == true) << v.levels[1].summary;
  EXPECT_EQ(v.levels[1].summary, "76 of 76 FLASH_ATTN nodes on CUDA12");
  in.expect_backend = "CUDA1";
  EXPECT_TRUE(decide(in).levels[1].active == false);
}

// Without split headers, "CUDA1" may be CUDA1 or CUDA10..CUDA15: placement says so and decides
// nothing; with the kernel tally (device 12 ran the fused kernels) level 3 decides.
TEST(BackendNames, SixteenCudaDevicesWithoutSplitHeadersRestOnTheOtherLevels) {
  const auto& sigs = llama_signatures();
  auto records = split_records(without_split_headers(sixteen_gpu_log()), sigs);
  LogScan log = scan_log(records, sigs);
  Placement p = scan_placement(records, sigs);
  EXPECT_EQ(p.fused_nodes, (std::map<std::string, int>{{"CUDA1?", 76}}));
  EXPECT_EQ(candidates_text(p.ambiguous.at("CUDA1?")), "CUDA1, CUDA10..CUDA15");
  std::string tally = "# flashproof-probe v2 status=ok state=final pid=1 cupti=130001 (synthetic: device 12 of 16)\n";
  std::istringstream rows(read_text(fixture("logs/h200-live/fa_on.verbose.kernels.tsv")));
  for (std::string line; std::getline(rows, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t t2 = line.find('\t', line.find('\t') + 1);
    tally += line.substr(0, t2) + "\t12" + line.substr(t2) + "\n";
  }
  auto parsed = parse_kernel_tally(tally, "synthetic.tsv");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  KernelSummary kernels = classify_kernels(*parsed, sigs);

  VerdictInput in = verdict_input(sigs);
  in.log = &log;
  in.placement = &p;
  in.expect_backend = "CUDA12";
  Verdict without_kernels = decide(in);
  EXPECT_FALSE(without_kernels.levels[1].used);
  EXPECT_NE(without_kernels.levels[1].unavailable_why.find("may be any of CUDA1, CUDA10..CUDA15"), std::string::npos);
  EXPECT_EQ(without_kernels.activity, Activity::NoEvidence);  // the log alone never proves active

  in.kernels = &kernels;
  Verdict with_kernels = decide(in);
  EXPECT_EQ(with_kernels.activity, Activity::Active) << format_verdict(with_kernels);
  EXPECT_EQ(with_kernels.levels_used, (std::vector<int>{1, 3}));

  in.expect_backend = "CUDA3";  // none of the candidates: those nodes are not on CUDA3, whatever they are
  Verdict elsewhere = decide(in);
  EXPECT_TRUE(elsewhere.levels[1].used);
  EXPECT_TRUE(elsewhere.levels[1].active == false);
}

// What `llama-server --list-devices` prints (build 11669): the harness asks it before a case that
// expects a Vulkan device (flow/passes/case_context.cpp) and skips the case when the device is not listed.
TEST(BackendNames, ListDevicesOutput) {
  const auto& sigs = llama_signatures();
  auto listed = [&](const std::string& text) { return run_backends(split_records(text, sigs), sigs).names(); };
  EXPECT_EQ(listed("Available devices:\n  Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits) (2048 MiB, 2048 MiB free)\n"),
            (std::vector<std::string>{"Vulkan0"}));
  EXPECT_EQ(listed("ggml_backend_load_best: failed to enumerate /usr/lib/x86_64-linux-gnu/ggml/backends0: No such file or "
                   "directory\nAvailable devices:\n  (none)\n"),
            (std::vector<std::string>{}));
  EXPECT_EQ(listed("Available devices:\n  CUDA0: NVIDIA H200 (143155 MiB, 142617 MiB free)\n"
                   "  Vulkan0: NVIDIA H200 (143771 MiB, 143771 MiB free)\n"),
            (std::vector<std::string>{"CUDA0", "Vulkan0"}));
}

// The rule the split-header resolution rests on: every node the scheduler prints runs on the backend
// of the split it is printed in (ggml starts a new split where the backend changes). Checked on
// every recorded llama.cpp log with scheduler records.
TEST(BackendNames, EveryNodeRunsOnItsSplitsBackend) {
  const auto& sigs = llama_signatures();
  int logs = 0, nodes = 0;
  for (const char* dir : {"logs/h200", "logs/h200-live", "logs/cpu", "logs/vulkan"}) {
    for (const auto& entry : std::filesystem::directory_iterator(fixture(dir))) {
      const std::string path = entry.path().string();
      if (path.size() < 7 || path.substr(path.size() - 7) != ".log.gz") continue;
      std::string split;
      int checked = 0;
      RegexMatch m;
      for (const auto& rec : split_records(read_text(path), sigs)) {
        for (const auto& rule : sigs.placement) {
          if (!rule_search(rule, rec.text, m)) continue;
          if (rule.kind == RuleKind::Split) split = capture(rule, m, "backend");
          if (rule.kind == RuleKind::FusedNode || rule.kind == RuleKind::UnfusedNode) {
            ASSERT_FALSE(split.empty()) << path << ": a node before any split header: " << rec.text;
            EXPECT_EQ(capture(rule, m, "backend"), cut_backend_name(split, rule.name_width)) << path << ": " << rec.text;
            ++checked;
          }
          break;
        }
      }
      if (checked > 0) ++logs;
      nodes += checked;
    }
  }
  EXPECT_GE(logs, 20);
  EXPECT_GT(nodes, 1000);
}

}  // namespace
}  // namespace fp
