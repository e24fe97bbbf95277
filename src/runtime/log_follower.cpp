#include "runtime/log_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "runtime/launcher.h"
#include "util/text.h"

namespace fp {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Status write_all(int fd, const char* p, size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return make_error(what + ": " + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<LogFollower>> LogFollower::follow_file(const std::string& path) {
  std::unique_ptr<LogFollower> f(new LogFollower());
  f->path_ = path;
  f->source_ = "log file " + path;
  f->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f->fd_ < 0) return make_error("the server's log " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f->fd_, &st) != 0 || !S_ISREG(st.st_mode))
    return make_error("the server's log " + path + ": not a regular file");
  f->inode_ = st.st_ino;
  f->pos_ = st.st_size;
  return f;
}

Result<std::unique_ptr<LogFollower>> LogFollower::follow_command(const std::vector<std::string>& argv,
                                                                 const std::string& output_path, double settle_s,
                                                                 double max_settle_s) {
  const std::string shown = join(argv, " ");
  FP_TRY(Process p, Process::spawn(argv, {}, output_path));
  std::unique_ptr<LogFollower> f;
  {
    auto opened = follow_file(output_path);
    if (!opened) {
      p.stop(1.0);
      return opened.error();
    }
    f = std::move(opened).value();
  }
  f->source_ = "output of " + shown;
  // What the command prints before it first falls quiet is its replay of older lines.
  const auto t0 = Clock::now();
  auto last_change = t0;
  off_t last = 0;
  while (since(last_change) < settle_s && since(t0) < max_settle_s) {
    if (ExitInfo e = p.poll(); e.exited)
      return make_error("the log command " + quote(shown) + " " + e.describe() +
                        " at once; it must keep printing the server's log (follow mode: journalctl -f, docker logs -f, "
                        "kubectl logs -f). Its output:\n" + log_tail(output_path, 8));
    struct stat st {};
    if (::fstat(f->fd_, &st) == 0 && st.st_size != last) {
      last = st.st_size;
      last_change = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  f->pos_ = last;
  if (last > 0)
    f->notes_.push_back("dropped the " + std::to_string(last) + " bytes " + quote(shown) +
                        " printed before it first fell quiet (its replay of lines older than this run)");
  f->command_ = std::move(p);
  return f;
}

LogFollower::~LogFollower() {
  if (fd_ >= 0) ::close(fd_);
  if (command_) command_->stop(1.0);
}

off_t LogFollower::pending() const {
  struct stat st {};
  off_t n = 0;
  if (::fstat(fd_, &st) == 0) n = st.st_size < pos_ ? st.st_size : st.st_size - pos_;
  struct stat now {};
  if (::stat(path_.c_str(), &now) == 0 && now.st_ino != inode_) n += now.st_size;
  return n;
}

Result<size_t> LogFollower::copy_new(int out_fd) {
  char buf[1 << 16];
  size_t copied = 0;
  for (int files = 0; files < 2; ++files) {
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && st.st_size < pos_) {
      notes_.push_back(path_ + " was truncated during the run (rotation in place): read again from its start");
      pos_ = 0;
    }
    for (;;) {
      ssize_t n = ::pread(fd_, buf, sizeof buf, pos_);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return make_error(path_ + ": " + std::strerror(errno));
      if (n == 0) break;
      FP_TRY_STATUS(write_all(out_fd, buf, static_cast<size_t>(n), "the run's copy of the server's log"));
      pos_ += n;
      copied += static_cast<size_t>(n);
    }
    struct stat now {};
    if (::stat(path_.c_str(), &now) != 0 || now.st_ino == inode_) break;
    // Renamed away and replaced (logrotate): the old file is read to its end, now the new one.
    notes_.push_back(path_ + " was replaced during the run (rotation): read the old file to its end, then the new one");
    const int next = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (next < 0) break;
    ::close(fd_);
    fd_ = next;
    inode_ = now.st_ino;
    pos_ = 0;
  }
  return copied;
}

Result<size_t> LogFollower::finish(const std::string& out_path, double quiet_s, double max_s) {
  const auto t0 = Clock::now();
  auto last_change = t0;
  off_t last = pending();
  while (since(last_change) < quiet_s && since(t0) < max_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (off_t n = pending(); n != last) {
      last = n;
      last_change = Clock::now();
    }
  }
  if (command_) {
    if (ExitInfo e = command_->poll(); e.exited)
      notes_.push_back("the log command " + e.describe() + " during the run: lines after that are missing");
    command_->stop(1.0);
  }
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return make_error(out_path + ": " + std::strerror(errno));
  auto copied = copy_new(out);
  ::close(out);
  return copied;
}

}  // namespace fp
