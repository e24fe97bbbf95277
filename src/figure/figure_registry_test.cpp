#include "figure/figure_registry.h"

#include <cmath>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;

// One entry per name; every entry complete: a unit, a definition, a floor with its reason, engines
// that can measure it from an extractor or from their own source (probe, sustained, memory, the
// load levels' and targets' figures).
TEST(FigureRegistry, EveryEntryIsComplete) {
  std::set<std::string_view> names;
  for (const auto& d : figure_registry()) {
    SCOPED_TRACE(std::string(d.name));
    EXPECT_TRUE(names.insert(d.name).second) << "a name is defined twice";
    EXPECT_FALSE(d.unit.empty());
    EXPECT_FALSE(d.definition.empty());
    EXPECT_FALSE(d.floor_why.empty());
    EXPECT_GE(d.floor, 0);
    const int extractors = (d.per_request != nullptr) + (d.per_round != nullptr) + (d.per_launch != nullptr);
    EXPECT_LE(extractors, 1);
    if ((d.engines & (kGoldenEngine | kPairedEngine)) && (d.source == FigureSource::request || d.source == FigureSource::runtime_timings ||
                                                          d.source == FigureSource::round || d.source == FigureSource::launch)) {
      EXPECT_EQ(extractors, 1) << "measured by an engine from requests, rounds or launches: it needs its extractor";
    }
    if (d.source == FigureSource::probe || d.source == FigureSource::memory) {
      EXPECT_FALSE(d.machine_reference);
    }
    if (!d.golden_name.empty()) {
      EXPECT_NE(figure_def(std::string(d.golden_name)), nullptr);
    }
    if (!d.old_name.empty()) {
      EXPECT_EQ(paired_figure_name(std::string(d.old_name)), d.name);
    }
    if (!d.replaced_by.empty()) {
      EXPECT_EQ(d.engines, 0u) << "replaced: no engine measures it";
      const FigureDef* r = figure_def(std::string(d.replaced_by));
      ASSERT_NE(r, nullptr);
      EXPECT_NE(r->engines, 0u);
      EXPECT_EQ(r->unit, d.unit);
    }
  }
}

// Distinct definitions carry distinct names: the golden path's pooled itl_ms and the side-by-side
// engine's per-launch itl_mean_ms; a gate.json or case file that says itl_ms for the latter still reads.
TEST(FigureRegistry, ItlHasOneNamePerDefinition) {
  const FigureDef* pooled = figure_def("itl_ms");
  const FigureDef* mean = figure_def("itl_mean_ms");
  ASSERT_TRUE(pooled && mean);
  EXPECT_TRUE(pooled->per_request);
  EXPECT_TRUE(mean->per_launch);
  EXPECT_EQ(pooled->engines & kPairedEngine, 0u);
  EXPECT_EQ(mean->engines & kGoldenEngine, 0u);
  EXPECT_EQ(paired_figure_name("itl_ms"), "itl_mean_ms");
  EXPECT_EQ(paired_figure_name("ttft_ms"), "ttft_ms");
  EXPECT_EQ(mean->golden_name, "itl_ms");
}

// Issue 41 item 3: kernel time has one definition in both engines, per token of the job's load, and
// its name says so; what the side-by-side gate recorded before (per launch of the timed workload,
// gpu_kernel_ms in gate.json) keeps a name of its own that says per launch, and a case that named
// it gates the per-token figure.
TEST(FigureRegistry, KernelTimeHasOneDefinitionInBothEnginesAndItsNameSaysPerWhat) {
  for (const char* name : {"gpu_kernel_ms_per_token", "attention_kernel_ms_per_token"}) {
    SCOPED_TRACE(name);
    const FigureDef* d = figure_def(name);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->engines & (kGoldenEngine | kPairedEngine), kGoldenEngine | kPairedEngine);
    EXPECT_TRUE(d->golden_name.empty()) << "the same name in both engines";
    EXPECT_THAT(std::string(d->definition), ::testing::EndsWith("per token"));
  }
  for (const char* name : {"gpu_kernel_ms_per_launch", "attention_kernel_ms_per_launch"}) {
    SCOPED_TRACE(name);
    const FigureDef* d = figure_def(name);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->engines, 0u);
    EXPECT_THAT(std::string(d->definition), ::testing::HasSubstr("per launch"));
  }
  EXPECT_EQ(figure_def("gpu_kernel_ms"), nullptr) << "no figure of that name: its two definitions have one name each";
  EXPECT_EQ(paired_figure_name("gpu_kernel_ms"), "gpu_kernel_ms_per_launch");  // a recorded gate.json: its own definition
  EXPECT_EQ(paired_figure_name("attention_kernel_ms"), "attention_kernel_ms_per_launch");
  EXPECT_EQ(gated_figure_name("gpu_kernel_ms"), "gpu_kernel_ms_per_token");  // a case file: what gates today
  EXPECT_EQ(gated_figure_name("attention_kernel_ms"), "attention_kernel_ms_per_token");
  EXPECT_EQ(gated_figure_name("itl_ms"), "itl_mean_ms");
  EXPECT_EQ(gated_figure_name("ttft_ms"), "ttft_ms");
  // Every name of a kernel figure says what it is per.
  for (const auto& d : figure_registry())
    if (d.source == FigureSource::probe) {
      const std::string n(d.name);
      EXPECT_TRUE(n.size() > 10 && (n.rfind("_per_token") == n.size() - 10 || n.rfind("_per_launch") == n.size() - 11)) << n;
    }
}

TEST(FigureRegistry, DirectionFromTheEntryLevelsIncluded) {
  EXPECT_TRUE(figure_lower_is_better("ttft_ms"));
  EXPECT_FALSE(figure_lower_is_better("throughput_tokens_per_s"));
  EXPECT_FALSE(figure_lower_is_better("c4.throughput_tokens_per_s"));
  EXPECT_FALSE(figure_lower_is_better("goodput_share"));
  EXPECT_TRUE(figure_lower_is_better("memory.kv_cache_mib")) << "a name the registry does not hold goes downward";
  EXPECT_EQ(base_figure_name("c16.itl_ms"), "itl_ms");
  EXPECT_EQ(base_figure_name("c.x"), "c.x");
  EXPECT_EQ(base_figure_name("c4."), "c4.");
}

// The lists engines and case files show, in registry order (result files, A/B tables).
TEST(FigureRegistry, EngineListsInRegistryOrder) {
  EXPECT_THAT(figure_names(kGoldenEngine),
              ElementsAre("ttft_ms", "ttft_ms_p95", "tpot_ms", "itl_ms", "e2e_ms", "prompt_tokens_per_s", "decode_tokens_per_s",
                          "throughput_tokens_per_s", "client_minus_server_prompt_ms", "server_prompt_ms", "server_tpot_ms",
                          "cpu_ms_per_token", "gpu_kernel_ms_per_token", "attention_kernel_ms_per_token"));
  EXPECT_THAT(figure_names(kPairedEngine), ElementsAre("cold_ready_ms", "cold_first_ttft_ms", "ttft_ms", "tpot_ms", "itl_mean_ms", "e2e_ms",
                                                       "throughput_tokens_per_s", "server_prompt_ms", "server_tpot_ms", "cpu_ms_per_token",
                                                       "gpu_kernel_ms_per_token", "attention_kernel_ms_per_token"));
  EXPECT_THAT(user_felt_figure_names(), ElementsAre("ttft_ms", "ttft_ms_p95", "tpot_ms", "itl_ms", "itl_mean_ms", "e2e_ms",
                                                    "prompt_tokens_per_s", "decode_tokens_per_s", "throughput_tokens_per_s"));
}

// The extractors on one request: the client's clock and the runtime's own timings.
TEST(FigureRegistry, RequestExtractors) {
  RequestFacts r;
  r.ttft_s = 0.1;
  r.e2e_s = 0.5;
  r.tpot_s = 0.04;
  r.prompt_tokens = 50;
  r.completion_tokens = 11;
  r.runtime_cpu_s = 0.61;
  r.gaps_s = {0.03, 0.05};
  r.server_prompt_ms = 80;
  r.server_decode_ms = 400;
  r.server_decode_tokens = 10;
  auto one = [&](const char* name) {
    std::vector<double> out;
    figure_def(name)->per_request(r, out);
    return out;
  };
  EXPECT_THAT(one("ttft_ms"), ElementsAre(100));
  EXPECT_THAT(one("tpot_ms"), ElementsAre(40));
  EXPECT_THAT(one("itl_ms"), ElementsAre(30, 50));
  EXPECT_THAT(one("e2e_ms"), ElementsAre(500));
  EXPECT_THAT(one("prompt_tokens_per_s"), ElementsAre(500));
  EXPECT_THAT(one("decode_tokens_per_s"), ElementsAre(25));
  EXPECT_THAT(one("client_minus_server_prompt_ms"), ElementsAre(20));
  EXPECT_THAT(one("server_prompt_ms"), ElementsAre(80));
  EXPECT_THAT(one("server_tpot_ms"), ElementsAre(40));
  EXPECT_THAT(one("cpu_ms_per_token"), ElementsAre(10));
  r.server_prompt_ms = std::nan("");
  EXPECT_TRUE(one("server_prompt_ms").empty()) << "not reported: not measured";
  EXPECT_TRUE(one("client_minus_server_prompt_ms").empty());
}

// The per-launch itl_mean_ms: the median of the requests' mean gaps, from the decode probes where
// the launch has them; itl_requests_ms the requests' own then.
TEST(FigureRegistry, LaunchExtractors) {
  LaunchFacts l;
  l.ready_s = 1.5;
  RequestFacts a, b, probe;
  a.event_times_s = {0, 0.01, 0.02};  // mean gap 10 ms
  b.event_times_s = {0, 0.03};        // 30 ms
  probe.event_times_s = {0, 0.012};   // 12 ms
  l.requests = {a, b, a};
  EXPECT_DOUBLE_EQ(*figure_def("cold_ready_ms")->per_launch(l), 1500);
  EXPECT_DOUBLE_EQ(*figure_def("itl_mean_ms")->per_launch(l), 10);
  EXPECT_FALSE(figure_def("itl_requests_ms")->per_launch(l)) << "no probes: itl_mean_ms is the requests' own unit";
  l.probes = {probe};
  EXPECT_DOUBLE_EQ(*figure_def("itl_mean_ms")->per_launch(l), 12);
  EXPECT_DOUBLE_EQ(*figure_def("itl_requests_ms")->per_launch(l), 10);
  EXPECT_FALSE(figure_def("cold_first_ttft_ms")->per_launch(l));
}

// What each job gates on without a plan.gated, per engine: the golden path gates the round's TTFT
// p95 and the pooled token gaps, the side-by-side gate the per-request TTFT and the per-launch mean
// gap; batch gates its throughput in both; extraction nothing (its answers decide).
TEST(FigureRegistry, JobGatedFigures) {
  EXPECT_THAT(job_gated_figures(kGoldenEngine, kChatJob), ElementsAre("ttft_ms_p95"));
  EXPECT_THAT(job_gated_figures(kGoldenEngine, kCompletionJob), ElementsAre("ttft_ms_p95", "itl_ms"));
  EXPECT_THAT(job_gated_figures(kGoldenEngine, kBatchJob), ElementsAre("throughput_tokens_per_s"));
  EXPECT_TRUE(job_gated_figures(kGoldenEngine, kExtractionJob).empty());
  EXPECT_THAT(job_gated_figures(kPairedEngine, kChatJob), ElementsAre("ttft_ms"));
  EXPECT_THAT(job_gated_figures(kPairedEngine, kCompletionJob), ElementsAre("ttft_ms", "itl_mean_ms"));
  EXPECT_THAT(job_gated_figures(kPairedEngine, kBatchJob), ElementsAre("throughput_tokens_per_s"));
  EXPECT_TRUE(job_gated_figures(kPairedEngine, kExtractionJob).empty());
  EXPECT_TRUE(job_gated_figures(kAbEngine, kChatJob).empty());
  // Each engine gates only what it measures.
  for (const auto& d : figure_registry()) {
    if (d.golden_gated_jobs) {
      EXPECT_TRUE(d.engines & kGoldenEngine) << d.name;
    }
    if (d.paired_gated_jobs) {
      EXPECT_TRUE((d.engines & kPairedEngine) && d.gateable) << d.name;
    }
  }
}

// The sitting spreads (golden/noise_band.h): the GPU's clocks move least, and only they were
// measured on the golden's own GPU.
TEST(FigureRegistry, SittingSpreads) {
  for (const auto& d : figure_registry()) {
    SCOPED_TRACE(std::string(d.name));
    EXPECT_GT(d.sitting_sigma, 0);
    EXPECT_LE(d.sitting_sigma_same_gpu, d.sitting_sigma);
    if (d.source == FigureSource::probe) {
      EXPECT_LT(d.sitting_sigma, 0.01);
      EXPECT_GT(d.sitting_prior_df_same_gpu, 0);
    } else {
      EXPECT_EQ(d.sitting_sigma_same_gpu, d.sitting_sigma);
      EXPECT_EQ(d.sitting_prior_df_same_gpu, 0);
    }
  }
  EXPECT_EQ(figure_def("ttft_ms")->sitting_sigma, kDefaultSittingSigma);
  EXPECT_EQ(figure_def("ttft_ms_p95")->sitting_sigma, 0.15);
  EXPECT_EQ(figure_def("itl_ms")->sitting_sigma, 0.20);
  EXPECT_EQ(figure_def("gpu_kernel_ms_per_token")->sitting_sigma_same_gpu, 0.002);
}

}  // namespace
}  // namespace fp
