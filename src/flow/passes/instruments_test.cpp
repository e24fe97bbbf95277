#include "flow/passes/instruments.h"

#include <gtest/gtest.h>

#include "runtime/runtime_data.h"

namespace fp {
namespace {

std::vector<std::string> names(const std::vector<Instrument>& is) {
  std::vector<std::string> out;
  for (const auto& i : is) out.push_back(i.name);
  return out;
}

// llama-server's evidence pass on a Vulkan case with the probe attached: every instrument, in the
// order they come off, each with what it adds and the levels it serves.
TEST(Instruments, LlamaServerSplitsItsEvidenceLaunchIntoInstruments) {
  auto adapter = load_adapter("llama-server");
  ASSERT_TRUE(adapter.ok()) << adapter.error().message;
  auto sigs = load_runtime_signatures("llama-server");
  ASSERT_TRUE(sigs.ok() && sigs->device_timings) << (sigs ? "no device_timings" : sigs.error().message);
  GpuProbePlan probe;
  probe.attached = true;
  probe.env = {{"CUDA_INJECTION64_PATH", "/x/libflashproof_probe.so"}, {"FLASHPROOF_KERNEL_TALLY", "/run/kernels.%p.tsv"}};
  const auto all = evidence_instruments(*adapter, &*sigs->device_timings, probe);
  EXPECT_EQ(names(all), (std::vector<std::string>{"device_timings", "kernel_probe", "scheduler_debug", "verbose_logging"}));
  EXPECT_EQ(all[0].how(), "GGML_VK_PERF_LOGGER=1");
  EXPECT_EQ(all[0].levels, std::vector<std::string>{"kernels"});
  EXPECT_EQ(all[2].how(), "GGML_SCHED_DEBUG=2");
  EXPECT_EQ(all[2].levels, std::vector<std::string>{"placement"});
  EXPECT_EQ(all[3].how(), "-v, LLAMA_ARG_LOG_VERBOSITY=5");

  // Everything on: the evidence launch as it always was.
  const std::map<std::string, std::string> case_env = {{"GGML_VK_VISIBLE_DEVICES", "0"}};
  InstrumentedLaunch full = instrumented_launch(case_env, *adapter, all);
  EXPECT_EQ(full.extra_args, std::vector<std::string>{"-v"});
  EXPECT_EQ(full.env.size(), 6u);
  EXPECT_EQ(full.env.at("GGML_VK_PERF_LOGGER"), "1");
  // The perf logger off: nothing else changes.
  InstrumentedLaunch no_timings = instrumented_launch(case_env, *adapter, instruments_without(all, {"device_timings"}));
  EXPECT_FALSE(no_timings.env.count("GGML_VK_PERF_LOGGER"));
  EXPECT_EQ(no_timings.env.at("GGML_SCHED_DEBUG"), "2");
  EXPECT_EQ(no_timings.extra_args, std::vector<std::string>{"-v"});
  // None on: the timed configuration (the timed runs' -lv 4, the case's own env).
  InstrumentedLaunch none = instrumented_launch(case_env, *adapter, {});
  EXPECT_EQ(none.extra_args, (std::vector<std::string>{"-lv", "4"}));
  EXPECT_EQ(none.env, case_env);
}

// A CPU case without the probe has two instruments; vLLM's DEBUG logging is verbose logging; a
// runtime whose evidence launch adds nothing has none.
TEST(Instruments, OnlyWhatTheLaunchAdds) {
  auto llama = load_adapter("llama-server");
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(names(evidence_instruments(*llama, nullptr, GpuProbePlan{})), (std::vector<std::string>{"scheduler_debug", "verbose_logging"}));
  auto vllm = load_adapter("vllm");
  ASSERT_TRUE(vllm.ok());
  const auto v = evidence_instruments(*vllm, nullptr, GpuProbePlan{});
  ASSERT_EQ(names(v), std::vector<std::string>{"verbose_logging"});
  EXPECT_EQ(v[0].how(), "VLLM_LOGGING_LEVEL=DEBUG");
  EXPECT_TRUE(v[0].levels.empty());
  auto generic = load_adapter("openai-compatible");
  ASSERT_TRUE(generic.ok());
  EXPECT_TRUE(evidence_instruments(*generic, nullptr, GpuProbePlan{}).empty());
}

}  // namespace
}  // namespace fp
