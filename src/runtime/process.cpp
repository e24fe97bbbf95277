#include "runtime/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/launch_guardian.h"
#include "util/text.h"

extern char** environ;

namespace fp {
namespace {

// Live process groups, for the signal handler: plain ints, written with atomics.
constexpr int kMaxGroups = 64;
std::atomic<pid_t> g_groups[kMaxGroups];
volatile sig_atomic_t g_interrupted = 0;

void register_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t expected = 0;
    if (g.compare_exchange_strong(expected, pgid)) return;
  }
}

void unregister_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t expected = pgid;
    if (g.compare_exchange_strong(expected, 0)) return;
  }
}

// The first signal stops every live runtime group and marks the harness interrupted, so the flow
// can still write its partial result (marked incomplete); a second one ends the harness at once.
void on_fatal_signal(int sig) {
  for (auto& g : g_groups) {
    pid_t p = g.load();
    if (p > 0) ::kill(-p, SIGKILL);
  }
  if (g_interrupted) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
  g_interrupted = sig;
}

ExitInfo decode(int status) {
  ExitInfo e;
  e.exited = true;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

std::string signal_text(int sig) { return "signal " + std::to_string(sig) + " (" + strsignal(sig) + ")"; }

// PIDFD_GET_INFO with PIDFD_INFO_EXIT (linux/pidfd.h of Linux 6.15; older headers lack it): the exit
// status of a process one holds a pidfd to, kept by the kernel after its parent reaped it.
struct PidfdInfo {
  uint64_t mask, cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exit_code;
};
static_assert(sizeof(PidfdInfo) == 64, "PIDFD_INFO_SIZE_VER0");
constexpr uint64_t kPidfdInfoExit = 1u << 3;
constexpr unsigned long kPidfdGetInfo = _IOWR(0xFF, 11, PidfdInfo);

std::optional<ExitInfo> pidfd_exit(int pidfd) {
  PidfdInfo info{};
  info.mask = kPidfdInfoExit;
  if (::ioctl(pidfd, kPidfdGetInfo, &info) != 0 || !(info.mask & kPidfdInfoExit)) return std::nullopt;
  return decode(info.exit_code);
}

bool pidfd_ended(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

std::vector<std::string> cmdline_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string program_name(const std::vector<std::string>& argv) {
  if (argv.empty()) return "?";
  auto base = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
  const std::string first = base(argv[0]);
  if (!starts_with(first, "ld-") || first.find(".so") == std::string::npos) return first;
  size_t i = 1;
  while (i < argv.size() && starts_with(argv[i], "--")) {
    const std::string& o = argv[i];
    const bool takes_value = o == "--library-path" || o == "--preload" || o == "--argv0" || o == "--audit" ||
                             o == "--glibc-hwcaps-prepend" || o == "--glibc-hwcaps-mask";
    i += takes_value ? 2 : 1;
  }
  return i < argv.size() ? base(argv[i]) : first;
}

std::string ExitInfo::describe() const {
  if (!exited) return "still running";
  std::string text;
  if (signal) {
    text = "killed by " + signal_text(signal);
  } else {
    text = "exited with status " + std::to_string(code);
    if (code > 128 && code < 128 + 65)
      text += " (128 + " + std::to_string(code - 128) + ": a shell's way of saying its child was killed by " + signal_text(code - 128) + ")";
  }
  return who.empty() ? text : text + " [" + who + "]";
}

Process::Process(Process&& o) noexcept
    : pid_(o.pid_), name_(std::move(o.name_)), exit_(o.exit_), members_(std::move(o.members_)), stopping_(o.stopping_),
      ended_by_stop_(o.ended_by_stop_), last_watch_ms_(o.last_watch_ms_) {
  o.pid_ = -1;
  o.members_.clear();
}

Process& Process::operator=(Process&& o) noexcept {
  if (this != &o) {
    stop(0.5);
    release_members();
    pid_ = o.pid_;
    name_ = std::move(o.name_);
    exit_ = o.exit_;
    members_ = std::move(o.members_);
    stopping_ = o.stopping_;
    ended_by_stop_ = o.ended_by_stop_;
    last_watch_ms_ = o.last_watch_ms_;
    o.pid_ = -1;
    o.members_.clear();
  }
  return *this;
}

Process::~Process() {
  stop(2.0);
  release_members();
}

void Process::release_members() {
  for (auto& m : members_)
    if (m.pidfd >= 0) ::close(m.pidfd);
  members_.clear();
}

void Process::forget_group() {
  unregister_group(pid_);
  guardian_message(launch_guardian_fd(), -pid_);
}

void Process::watch_group() {
  if (pid_ <= 0 || exit_.exited || stopping_) return;
  last_watch_ms_ = now_ms();
  for (pid_t p : live_processes_in_group(pid_)) {
    if (p == pid_) continue;
    bool known = false;
    for (const auto& m : members_) known = known || m.pid == p;
    if (known) continue;
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, p, 0));
    if (fd < 0) continue;  // gone meanwhile, or a kernel without pidfds (before 5.3)
    Member m;
    m.pid = p;
    m.pidfd = fd;
    m.name = program_name(cmdline_of(p));
    members_.push_back(std::move(m));
  }
}

void Process::note_member_ends(bool before_stop) {
  for (auto& m : members_) {
    if (m.ended == 0 && pidfd_ended(m.pidfd)) m.ended = before_stop ? 1 : 2;
    if (m.ended != 0 && !m.end) m.end = pidfd_exit(m.pidfd);
  }
}

ExitInfo Process::runtime_end() {
  const ExitInfo own = poll();
  note_member_ends(!stopping_);
  // While the started process runs, only a child that crashed (a signal that dumps core: SIGSEGV,
  // SIGABRT, ...) ends the runtime: a wrapper's helpers may exit non-zero as scripts do, a pipe's
  // writer dies of SIGPIPE, and a SIGKILL or SIGTERM may be the started process's own doing (a
  // runtime that kills its helpers before it aborts). Once it has been killed by a signal, that is
  // the runtime's end. Once it has exited with a status (a shell reports its child's), a child killed
  // by a signal says more, and, when that status is 0 (a pipeline's last command, `| cat`), so does
  // a child that exited non-zero.
  auto dumps_core = [](int sig) {
    for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP, SIGQUIT, SIGXCPU, SIGXFSZ})
      if (sig == s) return true;
    return false;
  };
  const Member* crashed = nullptr;
  for (const auto& m : members_) {
    if (m.ended != 1 || !m.end) continue;
    const bool killed = m.end->signal != 0 && m.end->signal != SIGPIPE;
    const bool failed = m.end->signal == 0 && m.end->code != 0;
    // (Ended by stop(): as if still running then.)
    const bool counts = !own.exited || ended_by_stop_ ? dumps_core(m.end->signal)
                        : own.signal                  ? false
                                                      : killed || (failed && own.code == 0);
    if (!counts) continue;
    if (!crashed || (killed && crashed->end->signal == 0)) crashed = &m;
  }
  if (!crashed) return own;
  ExitInfo e = *crashed->end;
  e.who = crashed->name + " (pid " + std::to_string(crashed->pid) + "), in the process group of " + name_ + " (pid " +
          std::to_string(pid_) + "), which flashproof started and which did not exec it";
  return e;
}

Result<Process> Process::spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                               const std::string& log_path, const std::string& cgroup_procs,
                               const std::vector<int>& cpus) {
  if (argv.empty() || argv[0].empty()) return make_error("cannot start a runtime: empty argv");
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return make_error(log_path + ": cannot open the runtime log: " + std::strerror(errno));
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(log_fd);
    return make_error(std::string("pipe2 failed: ") + std::strerror(errno));
  }
  // Everything the child needs is built before fork: no allocation after it.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (!env.count(key)) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const int guardian = launch_guardian_fd();
  cpu_set_t cpu_set;
  CPU_ZERO(&cpu_set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &cpu_set);

  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    return make_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    guardian_message(guardian, ::getpid());  // before exec: no process of the group escapes it
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the harness died before prctl took effect
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    if (!cpus.empty()) ::sched_setaffinity(0, sizeof cpu_set, &cpu_set);  // best effort: a bad set leaves it unpinned
    if (!cgroup_procs.empty()) {
      // Writing 0 moves the writer. A failure is reported as a negative errno.
      int fd = ::open(cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "0\n", 2) != 2) {
        int e = -errno;
        ssize_t ignored = ::write(err_pipe[1], &e, sizeof e);
        (void)ignored;
        ::_exit(127);
      }
      ::close(fd);
    }
    ::execvpe(args[0], args.data(), envp.data());
    int e = errno;
    ssize_t ignored = ::write(err_pipe[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before we might signal it
  register_group(pid);
  ::close(log_fd);
  ::close(err_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(err_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(err_pipe[0]);
  Process p;
  p.pid_ = pid;
  p.name_ = program_name(argv);
  if (n == sizeof child_errno && child_errno < 0) {
    p.stop(0);
    return make_error(cgroup_procs + ": the runtime could not join this cgroup: " + std::strerror(-child_errno));
  }
  if (n == sizeof child_errno) {
    p.stop(0);
    return make_error("cannot execute " + quote(argv[0]) + ": " + std::strerror(child_errno) +
                      (child_errno == ENOENT ? " (not found; check the path or run ci/setup.sh)" : ""));
  }
  return p;
}

ExitInfo Process::poll() {
  if (pid_ <= 0 || exit_.exited) return exit_;
  if (now_ms() - last_watch_ms_ >= 50) watch_group();
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    note_member_ends(!stopping_);
    ended_by_stop_ = stopping_;
    stopping_ = true;  // what ends from here on, ends by the kill below
    exit_ = decode(status);
    ::kill(-pid_, SIGKILL);  // any grandchildren of the group go too
    forget_group();
  }
  return exit_;
}

bool Process::running() { return pid_ > 0 && !poll().exited; }

void Process::signal_group(int sig) {
  if (pid_ > 0 && !exit_.exited) ::kill(-pid_, sig);
}

ExitInfo Process::stop(double grace_s) {
  if (pid_ <= 0) return exit_;
  if (!poll().exited) {
    note_member_ends(true);  // what ended before this is the runtime's own doing
    stopping_ = true;
    ::kill(-pid_, SIGCONT);  // a stopped (SIGSTOP) group cannot act on SIGTERM
    ::kill(-pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (!poll().exited && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!exit_.exited) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      exit_ = decode(status);
      ended_by_stop_ = true;
      forget_group();
    }
  }
  note_member_ends(false);
  return exit_;
}

void install_child_cleanup_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

bool interrupted() { return g_interrupted != 0; }

int interrupt_signal() { return g_interrupted; }

std::string interrupted_text() { return g_interrupted ? "interrupted by " + signal_text(g_interrupted) : std::string(); }

std::vector<pid_t> live_processes_in_group(pid_t pgid) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end || pid <= 0) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so parse after the last ')'.
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, group = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &group) != 3) continue;
    if (group == pgid && state != 'Z' && state != 'X') out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return out;
}

std::string process_group_state(pid_t pgid) {
  std::string letters;
  for (pid_t pid : live_processes_in_group(pgid)) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    size_t close = line.rfind(')');
    char state = 0;
    if (close != std::string::npos && std::sscanf(line.c_str() + close + 1, " %c", &state) == 1) letters += state;
  }
  if (letters.empty()) return "no live process (exited)";
  // A wrapper waiting on a stopped runtime is itself asleep (S): one stopped process says it.
  const bool some_stopped = letters.find_first_of("Tt") != std::string::npos;
  const bool some_d = letters.find('D') != std::string::npos;
  std::string what = some_stopped ? "a process of it stopped (T: SIGSTOP or a debugger)"
                     : some_d     ? "in uninterruptible sleep (D: waiting on I/O or the kernel)"
                                  : "running or waiting (neither stopped nor exited)";
  return what + ", process states " + letters;
}

std::optional<uint64_t> peak_rss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (starts_with(line, "VmHWM:")) return std::stoull(line.substr(6)) * 1024;
  return std::nullopt;
}

std::optional<double> thread_cpu_seconds(pid_t pid) {
  std::error_code ec;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  double ns = 0;
  bool any = false;
  for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream in(t.path() / "schedstat");
    double run_ns = 0;
    if (in >> run_ns) {
      ns += run_ns;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return ns * 1e-9;
}

}  // namespace fp
