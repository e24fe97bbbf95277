#include "runtime/cpu_quota.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "runtime/process.h"
#include "util/text.h"

namespace fp {
namespace {

TEST(CpuQuota, FindsTheV1CpuController) {
  const std::string mounts =
      "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n"
      "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n"
      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n";
  EXPECT_EQ(cgroup_v1_cpu_mount(mounts), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(cgroup_v1_cpu_mount("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"), "");
}

TEST(CpuQuota, RejectsAShareOutsideZeroToOne) {
  EXPECT_FALSE(CpuQuota::create(1.0, "t"));
  EXPECT_FALSE(CpuQuota::create(0.0, "t"));
}

// The runtime must be inside the group from its first instruction, threads included.
TEST(CpuQuota, ASpawnedProcessJoinsTheGroupAndTheGroupIsRemoved) {
  auto q = CpuQuota::create(0.5, "unit");
  if (!q) GTEST_SKIP() << "no writable cgroup-v1 cpu controller here: " << q.error().message;
  const std::string dir = std::filesystem::path(q->procs_file()).parent_path().string();
  auto quota = read_file(dir + "/cpu.cfs_quota_us");
  ASSERT_TRUE(quota);
  EXPECT_EQ(*quota, std::to_string(50000 * std::max(1u, std::thread::hardware_concurrency())) + "\n");
  const std::string log = testing::TempDir() + "/cpu_quota_test.log";
  auto p = Process::spawn({"/bin/sleep", "30"}, {}, log, q->procs_file());
  ASSERT_TRUE(p) << p.error().message;
  auto cg = read_file("/proc/" + std::to_string(p->pid()) + "/cgroup");
  ASSERT_TRUE(cg);
  EXPECT_NE(cg->find(std::filesystem::path(dir).filename().string()), std::string::npos) << *cg;
  p->stop(1);
  { CpuQuota gone = std::move(*q); }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(CpuQuota, AMissingGroupIsAnErrorNamingIt) {
  auto p = Process::spawn({"/bin/true"}, {}, testing::TempDir() + "/cpu_quota_test2.log", "/nonexistent/cgroup.procs");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("/nonexistent/cgroup.procs"), std::string::npos) << p.error().message;
}

}  // namespace
}  // namespace fp
