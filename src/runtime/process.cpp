#include "runtime/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

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

}  // namespace

std::string ExitInfo::describe() const {
  if (!exited) return "still running";
  if (signal) return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with status " + std::to_string(code);
}

Process::Process(Process&& o) noexcept : pid_(o.pid_), exit_(o.exit_) { o.pid_ = -1; }

Process& Process::operator=(Process&& o) noexcept {
  if (this != &o) {
    stop(0.5);
    pid_ = o.pid_;
    exit_ = o.exit_;
    o.pid_ = -1;
  }
  return *this;
}

Process::~Process() { stop(2.0); }

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
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_ = decode(status);
    ::kill(-pid_, SIGKILL);  // any grandchildren of the group go too
    unregister_group(pid_);
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
      unregister_group(pid_);
    }
  }
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
