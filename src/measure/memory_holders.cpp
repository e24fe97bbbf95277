#include "measure/memory_holders.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "measure/shared_card.h"

namespace fp {
namespace {

std::string whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The pgrp and ppid fields of /proc/PID/stat.
std::optional<std::pair<pid_t, pid_t>> group_and_parent(pid_t pid) {
  const std::string line = whole_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(line.substr(close + 1));
  std::string state;
  long ppid = 0, pgrp = 0;
  if (!(in >> state >> ppid >> pgrp)) return std::nullopt;
  return std::make_pair(static_cast<pid_t>(pgrp), static_cast<pid_t>(ppid));
}

// flashproof and the processes that started it.
std::set<pid_t> self_and_ancestors() {
  std::set<pid_t> out;
  for (pid_t p = ::getpid(); p > 1 && out.insert(p).second;) {
    const auto gp = group_and_parent(p);
    if (!gp) break;
    p = gp->second;
  }
  return out;
}

bool left_out(pid_t pid, pid_t runtime_pgid, const std::set<pid_t>& ours) {
  if (ours.count(pid)) return true;
  if (runtime_pgid <= 0) return false;
  const auto gp = group_and_parent(pid);
  return gp && gp->first == runtime_pgid;
}

}  // namespace

std::string joined_cmdline(std::string_view raw) {
  std::string s(raw);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

std::optional<uint64_t> resident_bytes(std::string_view status) {
  std::istringstream in{std::string(status)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    unsigned long long kib = 0;
    std::string unit;
    if (!(fields >> kib >> unit) || unit != "kB") return std::nullopt;
    return static_cast<uint64_t>(kib) * 1024u;
  }
  return std::nullopt;
}

OtherProcess describe_process(unsigned pid, std::optional<uint64_t> used_bytes) {
  OtherProcess p;
  p.pid = pid;
  const std::string dir = "/proc/" + std::to_string(pid);
  std::string comm = whole_file(dir + "/comm");
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
  p.command = comm;
  p.command_line = joined_cmdline(whole_file(dir + "/cmdline"));
  if (used_bytes) p.mib = static_cast<double>(*used_bytes) / kBytesPerMiB;
  return p;
}

Result<std::vector<OtherProcess>> other_gpu_processes(const Nvml& nvml, unsigned gpu, pid_t runtime_pgid) {
  FP_TRY(const auto procs, nvml.processes(gpu));
  const std::set<pid_t> ours = {::getpid()};
  std::vector<OtherProcess> out;
  for (const GpuProcess& g : procs) {
    if (left_out(static_cast<pid_t>(g.pid), runtime_pgid, ours)) continue;
    out.push_back(describe_process(g.pid, g.used_bytes));
  }
  return out;
}

std::vector<OtherProcess> host_processes_matching(const std::vector<std::string>& needles, pid_t runtime_pgid) {
  std::vector<OtherProcess> out;
  if (needles.empty()) return out;
  const std::set<pid_t> ours = self_and_ancestors();
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    OtherProcess p = describe_process(static_cast<unsigned>(pid), std::nullopt);
    if (p.command_line.empty()) continue;  // ended meanwhile, or a kernel thread
    bool wanted = false;
    for (const auto& n : needles) wanted = wanted || matches_process(p, n);
    if (!wanted || left_out(static_cast<pid_t>(pid), runtime_pgid, ours)) continue;
    if (auto rss = resident_bytes(whole_file("/proc/" + std::to_string(pid) + "/status"))) p.mib = static_cast<double>(*rss) / kBytesPerMiB;
    out.push_back(std::move(p));
  }
  closedir(proc);
  std::sort(out.begin(), out.end(), [](const OtherProcess& a, const OtherProcess& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace fp
