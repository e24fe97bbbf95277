// A supervised child process: started from argv (no shell) in its own process group, its stdout
// and stderr appended to one log file, and stopped with its whole group (SIGTERM, then SIGKILL).
// Children die with the harness (PR_SET_PDEATHSIG), SIGINT/SIGTERM to the harness stops every
// live group first, and the launch guardian (runtime/launch_guardian.h) kills every group still
// registered when the harness ends in any other way (SIGKILL), so no runtime is ever left behind,
// not even one a wrapper script started without exec.
//
// The group is watched, not only the child: a wrapper that does not exec leaves the runtime a
// grandchild, which its parent reaps, so waitpid never tells how it ended. Every other process of
// the group is held by a pidfd from when it is first seen, and the kernel keeps its exit status for
// the holder (PIDFD_INFO_EXIT, Linux 6.15); runtime_end() names the grandchild that crashed.
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
  // Empty: the process flashproof started. Otherwise which process of its group this is, e.g.
  // "llama-server (pid 4321), in the process group of the wrapper flashproof started (pid 4317), which did not exec it".
  std::string who;
  // "killed by signal 11 (Segmentation fault)"; a status above 128 also says what a shell means by it
  // ("exited with status 139 (128 + 11: a shell's way of saying its child was killed by signal 11 (...))").
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
  // How the process flashproof started ended (exited = false while it runs).
  ExitInfo poll();
  // How the runtime ended, as far as flashproof can tell: the started process's own end, unless a
  // process of its group ended by itself in a way that says more (`who` says which): one that
  // crashed (a signal that dumps core) while the started process lingers on; once the started process
  // has exited with a status (a wrapper's), one killed by a signal, or, after a status 0, one that
  // exited non-zero. A started process killed by a signal is the runtime's end itself. Call before
  // stop(): ends that stop() causes are not the runtime's own.
  ExitInfo runtime_end();
  // Looks for processes of the group not yet watched (poll() does this too, at most every 50 ms).
  void watch_group();
  // SIGTERM to the group, up to `grace_s` to exit, then SIGKILL; waits for the child. Idempotent.
  ExitInfo stop(double grace_s = 5.0);
  // Sends a signal to the whole group (e.g. SIGSTOP in fault tests).
  void signal_group(int sig);

 private:
  // A process of the group other than pid_, held by a pidfd.
  struct Member {
    pid_t pid = 0;
    int pidfd = -1;
    std::string name;           // the program it runs (through a loader: the program the loader runs)
    int ended = 0;                 // 0 running, 1 ended before stop() began (by itself), 2 after
    std::optional<ExitInfo> end;   // its status, once the kernel tells it
  };
  void note_member_ends(bool before_stop);
  void release_members();
  void forget_group();  // unregisters the group from the signal handler and the guardian
  pid_t pid_ = -1;
  std::string name_;  // the program flashproof started (program_name of its argv)
  ExitInfo exit_;
  std::vector<Member> members_;
  bool stopping_ = false;
  bool ended_by_stop_ = false;  // the started process ended by stop()'s signals, not by itself
  long long last_watch_ms_ = 0;
};

// Installs SIGINT/SIGTERM/SIGHUP handlers: the first signal kills every live runtime group and marks
// the harness interrupted (the flow then writes an incomplete result and exits 128+signal); a second
// signal ends the harness at once. Call once at start-up.
void install_child_cleanup_handlers();

// True once SIGINT/SIGTERM/SIGHUP has been received (long loops check it to end early).
bool interrupted();
// The signal that interrupted the harness, or 0.
int interrupt_signal();
// "interrupted by signal 2 (Interrupt)", for results and reports; "" when not interrupted.
std::string interrupted_text();

// Processes of a group that are still running (zombies excluded), from /proc. Used to prove that
// nothing of a runtime was left behind.
std::vector<pid_t> live_processes_in_group(pid_t pgid);

// What the processes of a runtime's group are doing, from /proc (state letters of proc(5)), for a
// report on a server that stopped answering: "a process of it stopped (T: SIGSTOP or a debugger)"
// where one of its live processes is stopped (a wrapper waiting on it sleeps), "in uninterruptible
// sleep (D)", "running or waiting", "no live process (exited)"; then the state letters of every
// live process, in /proc order.
std::string process_group_state(pid_t pgid);

// The peak resident set (VmHWM) of a live process, in bytes; empty when unreadable.
std::optional<uint64_t> peak_rss_bytes(pid_t pid);

// The program an argv runs: argv[0]'s file name, or through a dynamic loader (ld-linux*.so*, as
// ci/setup.sh starts Debian sid's build) the file name of the program the loader runs.
std::string program_name(const std::vector<std::string>& argv);

// CPU time, in seconds, that the live threads of a process have run so far: the sum over
// /proc/PID/task/*/schedstat (nanosecond resolution, unlike the 10 ms ticks of /proc/PID/stat).
// Threads that already exited are not counted; a runtime's worker threads live as long as it does.
// Empty when unreadable.
std::optional<double> thread_cpu_seconds(pid_t pid);

}  // namespace fp
