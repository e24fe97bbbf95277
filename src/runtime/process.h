// A supervised child process: started from argv (no shell) in its own process group, its stdout
// and stderr appended to one log file, and stopped with its whole group (SIGTERM, then SIGKILL).
// Children die with the harness (PR_SET_PDEATHSIG), and SIGINT/SIGTERM to the harness stops every
// live group first, so no runtime is ever left behind.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

struct ExitInfo {
  bool exited = false;   // false: still running
  int code = -1;         // exit status when it exited normally
  int signal = 0;        // the signal that ended it, else 0
  std::string describe() const;
};

class Process {
 public:
  Process() = default;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  ~Process();  // stops the group if still running

  // Starts argv[0] (looked up in PATH when it has no '/'), env = the harness's environment plus
  // `env`. Fails at once, naming the executable, when it cannot be executed.
  // `cgroup_procs`, when set, is a cgroup's `cgroup.procs` file the child joins before exec (so
  // every thread the runtime starts is in it: the side-by-side gate's CPU-quota calibration arm).
  // `cpus`, when not empty, is the CPU set the child (and every thread it starts) may run on.
  static Result<Process> spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                               const std::string& log_path, const std::string& cgroup_procs = "",
                               const std::vector<int>& cpus = {});

  pid_t pid() const { return pid_; }
  bool running();
  ExitInfo poll();
  // SIGTERM to the group, up to `grace_s` to exit, then SIGKILL; waits for the child. Idempotent.
  ExitInfo stop(double grace_s = 5.0);
  // Sends a signal to the whole group (e.g. SIGSTOP in fault tests).
  void signal_group(int sig);

 private:
  pid_t pid_ = -1;
  ExitInfo exit_;
};

// Installs SIGINT/SIGTERM/SIGHUP handlers: the first signal kills every live runtime group and marks
// the harness interrupted (the flow then writes an incomplete result and exits 128+signal); a second
// signal ends the harness at once. Call once at start-up.
void install_child_cleanup_handlers();

// True once SIGINT/SIGTERM/SIGHUP has been received (long loops check it to end early).
bool interrupted();
// The signal that interrupted the harness, or 0.
int interrupt_signal();

// Processes of a group that are still running (zombies excluded), from /proc. Used to prove that
// nothing of a runtime was left behind.
std::vector<pid_t> live_processes_in_group(pid_t pgid);

// The peak resident set (VmHWM) of a live process, in bytes; empty when unreadable.
std::optional<uint64_t> peak_rss_bytes(pid_t pid);

// CPU time, in seconds, that the live threads of a process have run so far: the sum over
// /proc/PID/task/*/schedstat (nanosecond resolution, unlike the 10 ms ticks of /proc/PID/stat).
// Threads that already exited are not counted; a runtime's worker threads live as long as it does.
// Empty when unreadable.
std::optional<double> thread_cpu_seconds(pid_t pid);

}  // namespace fp
