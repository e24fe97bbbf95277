#include "runtime/cpu_quota.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
constexpr long kPeriodUs = 100000;

// cgroup control files take one plain write (a rename would not reach the kernel).
Status write_control(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value << "\n";
  out.flush();
  if (!out) return make_error(path + ": cannot write " + quote(value) + " (needs root and a writable cpu controller)");
  return ok_status();
}

}  // namespace

std::string cgroup_v1_cpu_mount(const std::string& mounts_text) {
  std::istringstream in(mounts_text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string dev, dir, type, opts;
    if (!(f >> dev >> dir >> type >> opts) || type != "cgroup") continue;
    std::istringstream o(opts);
    std::string opt;
    while (std::getline(o, opt, ','))
      if (opt == "cpu") return dir;
  }
  return "";
}

CpuQuota::CpuQuota(CpuQuota&& other) noexcept { *this = std::move(other); }

CpuQuota& CpuQuota::operator=(CpuQuota&& other) noexcept {
  if (this != &other) {
    dir_ = std::move(other.dir_);
    procs_ = std::move(other.procs_);
    text_ = std::move(other.text_);
    other.dir_.clear();
    other.procs_.clear();
  }
  return *this;
}

CpuQuota::~CpuQuota() {
  if (dir_.empty()) return;
  // rmdir fails while a process is still in the group; the runtime has been stopped, but its
  // exit may take a moment to reach the cgroup.
  for (int i = 0; i < 50; ++i) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<CpuQuota> CpuQuota::create(double share, const std::string& tag) {
  if (!(share > 0 && share < 1))
    return make_error("CPU share " + std::to_string(share) + ": expected a fraction between 0 and 1, e.g. 0.95");
  const char* env = std::getenv("FLASHPROOF_CGROUP_CPU");
  std::string mount = env ? env : "";
  if (mount.empty()) {
    FP_TRY(std::string mounts, read_file("/proc/self/mounts"));
    mount = cgroup_v1_cpu_mount(mounts);
  }
  if (mount.empty())
    return make_error("no cgroup-v1 cpu controller mounted (/proc/self/mounts): a CPU quota needs one "
                      "(or set $FLASHPROOF_CGROUP_CPU to its folder)");
  CpuQuota q;
  q.dir_ = mount + "/flashproof-" + std::to_string(::getpid()) + "-" + tag;
  std::error_code ec;
  fs::create_directories(q.dir_, ec);
  if (ec) {
    std::string why = ec.message();
    q.dir_.clear();
    return make_error(mount + ": cannot create a cgroup for the CPU quota: " + why + " (needs root and a writable controller)");
  }
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  const long quota = std::lround(share * cpus * kPeriodUs);
  FP_TRY_STATUS(write_control(q.dir_ + "/cpu.cfs_period_us", std::to_string(kPeriodUs)));
  FP_TRY_STATUS(write_control(q.dir_ + "/cpu.cfs_quota_us", std::to_string(quota)));
  q.procs_ = q.dir_ + "/cgroup.procs";
  char buf[160];
  std::snprintf(buf, sizeof buf, "CPU quota %.1f%% of %u CPUs (cfs_quota_us %ld per %ld)", 100.0 * share, cpus, quota,
                kPeriodUs);
  q.text_ = buf;
  return q;
}

}  // namespace fp
