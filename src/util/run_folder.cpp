#include "util/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace fp {
namespace {
namespace fs = std::filesystem;

std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos && !pid.empty() ? pid : "";
}

}  // namespace

RunFolderClaim::RunFolderClaim(RunFolderClaim&& o) noexcept : dir_(std::move(o.dir_)), fd_(o.fd_) { o.fd_ = -1; }

RunFolderClaim& RunFolderClaim::operator=(RunFolderClaim&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    dir_ = std::move(o.dir_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

RunFolderClaim::~RunFolderClaim() {
  if (fd_ >= 0) ::close(fd_);
}

Result<RunFolderClaim> claim_run_folder(const std::string& dir, const std::string& how_named) {
  const std::string advice = how_named.empty() ? "" : " (or give " + how_named + " a new folder)";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(dir + ": cannot create the run folder: " + ec.message());
  const std::string lock = (fs::path(dir) / kRunFolderLock).string();
  RunFolderClaim claim;
  claim.dir_ = dir;
  // O_CLOEXEC: a runtime started during the run must not keep the lock after flashproof ends.
  claim.fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (claim.fd_ < 0) return make_error(lock + ": cannot open the run folder's lock: " + std::strerror(errno));
  if (::flock(claim.fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    if (e != EWOULDBLOCK) return make_error(lock + ": cannot lock the run folder: " + std::strerror(e));
    const std::string pid = holder_pid(claim.fd_);
    return make_error(dir + " is in use by another flashproof run (" + (pid.empty() ? "" : "pid " + pid + ", ") +
                      "which holds the lock " + lock + "): two runs in one folder would mix their logs and results; "
                      "wait for it to end, or run this one elsewhere" + advice);
  }
  std::vector<std::string> found;
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == kRunFolderLock) continue;
    ++entries;
    if (found.size() < 4) found.push_back(name);
  }
  if (ec) return make_error(dir + ": cannot list the run folder: " + ec.message());
  if (entries > 0) {
    std::sort(found.begin(), found.end());
    std::string names;
    for (const auto& n : found) names += (names.empty() ? "" : ", ") + n;
    if (entries > found.size()) names += ", ... (" + std::to_string(entries) + " entries)";
    return make_error(dir + " already holds an earlier run or other files (" + names +
                      "): a run never appends to or reads a log it did not write; remove that folder first (rm -r " + dir +
                      ")" + advice);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(claim.fd_, 0) != 0 || ::pwrite(claim.fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    return make_error(lock + ": cannot write the run folder's lock: " + std::strerror(errno));
  return claim;
}

std::string unused_folder_name(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return dir;
  for (int k = 2;; ++k) {
    const std::string d = dir + "-" + std::to_string(k);
    if (!fs::exists(d, ec)) return d;
  }
}

}  // namespace fp
