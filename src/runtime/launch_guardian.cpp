#include "runtime/launch_guardian.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

namespace fp {
namespace {

std::mutex g_mutex;
int g_write_fd = -1;
pid_t g_guardian = 0;
pid_t g_owner = 0;  // the process that started it: a forked copy of flashproof starts its own

// Group ids the guardian kills when flashproof's end closes. Only the guardian writes it (its own copy).
constexpr int kMaxGuardedGroups = 1024;
pid_t g_watched[kMaxGuardedGroups];

void close_all_but(int keep) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, keep + 1, ~0U, 0) == 0) {
    for (int fd = 0; fd < keep; ++fd) ::close(fd);
    return;
  }
#endif
  for (int fd = 0; fd < 65536; ++fd)
    if (fd != keep) ::close(fd);
}

// The guardian itself: only async-signal-safe calls (it was forked from a process with threads).
[[noreturn]] void guardian_main(int read_fd) {
  ::setsid();
  ::prctl(PR_SET_NAME, "fp-guardian", 0, 0, 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) ::sigaction(sig, &ignore, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::chdir("/") != 0) ::_exit(1);  // cannot happen; keeps no folder of the caller busy
  // Nothing of flashproof's stays open here: its log files, sockets, its stdout (a caller reading
  // flashproof's output to the end must not wait for the guardian), flashproof's end of the pair.
  const int kRead = 3;
  if (read_fd != kRead) {
    ::dup2(read_fd, kRead);
    ::close(read_fd);
  }
  close_all_but(kRead);
  const int devnull = ::open("/dev/null", O_RDWR);  // fd 0
  if (devnull == 0) {
    ::dup2(0, 1);
    ::dup2(0, 2);
  }
  for (;;) {
    int32_t msg = 0;
    const ssize_t n = ::recv(kRead, &msg, sizeof msg, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof msg)) break;  // 0: flashproof is gone
    if (msg > 0) {
      for (pid_t& g : g_watched)
        if (g == 0) {
          g = msg;
          break;
        }
    } else if (msg < 0) {
      for (pid_t& g : g_watched)
        if (g == -msg) g = 0;
    }
  }
  for (pid_t g : g_watched)
    if (g > 0) ::kill(-g, SIGKILL);
  ::_exit(0);
}

}  // namespace

int launch_guardian_fd() {
  std::lock_guard<std::mutex> lock(g_mutex);
  const pid_t self = ::getpid();
  if (g_owner == self) return g_write_fd;
  // Not started yet, or started by the process this one was forked from: its socket is not ours.
  if (g_write_fd >= 0) ::close(g_write_fd);
  g_write_fd = -1;
  g_guardian = 0;
  g_owner = self;
  // A socket pair rather than a pipe: send(MSG_NOSIGNAL) to a guardian that was killed is an error,
  // not a SIGPIPE (a child between fork and exec, or a test without the harness's handlers).
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return -1;
  }
  if (pid == 0) guardian_main(fds[0]);
  ::close(fds[0]);
  g_write_fd = fds[1];
  g_guardian = pid;
  return g_write_fd;
}

void guardian_message(int fd, pid_t pgid_or_minus) {
  if (fd < 0 || pgid_or_minus == 0) return;
  const int32_t msg = static_cast<int32_t>(pgid_or_minus);
  while (::send(fd, &msg, sizeof msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

pid_t launch_guardian_pid() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_owner == ::getpid() ? g_guardian : 0;
}

}  // namespace fp
