#include "measure/gpu_sampler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>

namespace fp {
namespace {

TEST(GpuSampler, WithoutNvmlReportsWhy) {
  GpuSampler sampler(Error{"not measured: libnvidia-ml.so.1 not found (no NVIDIA driver)"},
                     [] { return std::vector<pid_t>{getpid()}; });
  sampler.start();
  const auto report = sampler.stop();
  EXPECT_FALSE(report.measured);
  EXPECT_EQ(report.not_measured_reason, "not measured: libnvidia-ml.so.1 not found (no NVIDIA driver)");
  EXPECT_EQ(report.describe(), "gpu: not measured: libnvidia-ml.so.1 not found (no NVIDIA driver)\n");
}

TEST(GpuSampler, AccumulatesPeaksAndReasons) {
  GpuSampleAccumulator acc;
  GpuReading busy;
  busy.sm_clock_mhz = 1980;
  busy.events.bits = clock_event::kSwPowerCap;
  GpuReading hot;
  hot.sm_clock_mhz = 1500;
  hot.temperature_c = 80;
  hot.power_mw = 650000;
  hot.events.bits = clock_event::kHwThermalSlowdown;
  const std::set<pid_t> watched{100, 101};
  acc.add({{0, {{100, 1000}, {999, 5}}, busy}, {1, {{101, 300}}, std::nullopt}}, watched);
  acc.add({{0, {{100, 2000}, {101, std::nullopt}}, hot}, {1, {{101, 100}}, std::nullopt}}, watched);
  const auto r = acc.report();
  ASSERT_TRUE(r.measured);
  EXPECT_EQ(r.samples, 2u);
  ASSERT_EQ(r.process_peaks.size(), 2u);
  EXPECT_EQ(r.process_peaks[0].pid, 100);
  EXPECT_EQ(r.process_peaks[0].gpu, 0u);
  EXPECT_EQ(r.process_peaks[0].peak_bytes, 2000u);
  EXPECT_EQ(r.process_peaks[1].pid, 101);
  EXPECT_EQ(r.process_peaks[1].peak_bytes, 300u);
  EXPECT_EQ(r.peak_total_bytes, 2100u);
  EXPECT_EQ(r.clock_event_bits, clock_event::kSwPowerCap | clock_event::kHwThermalSlowdown);
  EXPECT_EQ(r.slowdown_samples, 2u);
  EXPECT_EQ(r.slowdown_names(), (std::vector<std::string>{"SW power cap", "HW thermal slowdown"}));
  EXPECT_EQ(r.min_sm_clock_mhz.value_or(0), 1500u);
  EXPECT_EQ(r.max_temperature_c, 80u);
  EXPECT_EQ(r.other_pids_seen, std::vector<pid_t>{999});
}

TEST(GpuSampler, NoSampleIsNotMeasured) {
  GpuSampleAccumulator acc;
  acc.add_error("not measured: nvmlDeviceGetCount_v2 failed: Unknown Error");
  const auto r = acc.report();
  EXPECT_FALSE(r.measured);
  EXPECT_EQ(r.not_measured_reason,
            "not measured: no GPU sample was taken (not measured: nvmlDeviceGetCount_v2 failed: Unknown Error)");
}

TEST(GpuSampler, ProcessGroupFromStat) {
  EXPECT_EQ(process_group_from_stat("1234 (llama-server) S 1 1234 1234 0 -1").value_or(-1), 1234);
  EXPECT_EQ(process_group_from_stat("77 (odd) name (x)) R 5 42 77 0").value_or(-1), 42);
  EXPECT_FALSE(process_group_from_stat("garbage").has_value());
  const auto mine = pids_in_process_group(getpgrp());
  EXPECT_NE(std::find(mine.begin(), mine.end(), getpid()), mine.end());
}

}  // namespace
}  // namespace fp
