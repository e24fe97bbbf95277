#include "measure/nvml.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fp {
namespace {

TEST(Nvml, MissingLibraryIsNotMeasuredNeverZero) {
  auto nvml = Nvml::open_library("libnvidia-ml-flashproof-absent.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.error().message.rfind("not measured: libnvidia-ml-flashproof-absent.so.1 not found (no NVIDIA driver)", 0), 0u)
      << nvml.error().message;
  EXPECT_EQ(nvml_reason(nvml.error()).rfind("libnvidia-ml-flashproof-absent.so.1 not found (no NVIDIA driver)", 0), 0u);
  EXPECT_EQ(nvml_reason(Error{"NVML lists none"}), "NVML lists none");
}

TEST(Nvml, OpenEitherWorksOrSaysWhy) {
  auto nvml = Nvml::open();
  if (!nvml.ok()) {
    EXPECT_EQ(nvml.error().message.rfind("not measured: ", 0), 0u) << nvml.error().message;
    return;
  }
  auto gpus = nvml->gpus();
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  for (const auto& g : *gpus) EXPECT_FALSE(g.name.empty());
}

TEST(Nvml, ClockEventNames) {
  EXPECT_EQ(describe_clock_events(0), "none");
  EXPECT_EQ(describe_clock_events(clock_event::kSwPowerCap | clock_event::kHwThermalSlowdown),
            "SW power cap, HW thermal slowdown");
  const auto names = clock_event_names(clock_event::kGpuIdle | 0x10000);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "GPU idle");
  EXPECT_EQ(names[1], "bit 0x10000");
  EXPECT_TRUE(ClockEvents{clock_event::kHwPowerBrakeSlowdown}.any_slowdown());
  EXPECT_FALSE(ClockEvents{clock_event::kGpuIdle}.any_slowdown());
}

TEST(Nvml, CudaVersionText) {
  DriverInfo d;
  d.cuda_version = 13000;
  EXPECT_EQ(d.cuda_version_text(), "13.0");
  d.cuda_version = 12080;
  EXPECT_EQ(d.cuda_version_text(), "12.8");
  d.cuda_version = 0;
  EXPECT_EQ(d.cuda_version_text(), "unknown");
}

TEST(Nvml, CtestResourceSpecJson) {
  std::vector<GpuInfo> gpus(2);
  gpus[0].index = 0;
  gpus[1].index = 1;
  const auto spec = nlohmann::json::parse(ctest_resource_spec_json(gpus));
  EXPECT_EQ(spec["version"]["major"], 1);
  EXPECT_EQ(spec["version"]["minor"], 0);
  ASSERT_EQ(spec["local"].size(), 1u);
  const auto& list = spec["local"][0]["gpus"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], "0");
  EXPECT_EQ(list[0]["slots"], 1);
  EXPECT_EQ(list[1]["id"], "1");

  const auto empty = nlohmann::json::parse(ctest_resource_spec_json({}));
  EXPECT_TRUE(empty["local"][0]["gpus"].empty());
}

}  // namespace
}  // namespace fp
