// CPU check (runs in CI, no GPU needed): loads the probe the way the CUDA driver does (dlopen, then
// InitializeInjection) in a child process, lets the child exit, and checks the tally file's header.
// Without a driver CUPTI cannot start, so the probe must say so in the file (status=failed) rather
// than leave nothing or an empty tally; with a driver it may say status=ok. Also checks that "%p" in
// FLASHPROOF_KERNEL_TALLY becomes the pid and that an unset variable leaves the probe idle.
//
// Usage: flashproof_probe_load_test PROBE_SO
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

int fails = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  if (!ok) ++fails;
}

// Runs InitializeInjection in a child with FLASHPROOF_KERNEL_TALLY = tally (unset if empty).
// Returns the child's pid after it exited 0, or -1.
pid_t run_child(const char* probe, const std::string& tally) {
  std::fflush(stdout);  // or the child's exit() prints our buffered lines again
  const pid_t pid = fork();
  if (pid == 0) {
    if (tally.empty()) unsetenv("FLASHPROOF_KERNEL_TALLY");
    else setenv("FLASHPROOF_KERNEL_TALLY", tally.c_str(), 1);
    setenv("FLASHPROOF_PROBE_INTERVAL_MS", "50", 1);
    void* lib = dlopen(probe, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      std::fprintf(stderr, "dlopen(%s): %s\n", probe, dlerror());
      _exit(3);
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
    if (init == nullptr) _exit(4);
    if (init() != 1) _exit(5);
    usleep(200 * 1000);  // let the interval writer run a few times
    std::exit(0);        // atexit handlers: the final write
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::printf("child exited with status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
  }
  return pid;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: flashproof_probe_load_test PROBE_SO\n");
    return 2;
  }
  char dir_template[] = "/tmp/flashproof-probe-load.XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) return 2;
  const std::string pattern = std::string(dir) + "/tally-%p.tsv";

  const pid_t child = run_child(argv[1], pattern);
  check(child > 0, "the probe loads, InitializeInjection returns 1, the process exits normally");
  const std::string path = std::string(dir) + "/tally-" + std::to_string(child) + ".tsv";
  const std::string text = slurp(path);
  check(!text.empty(), "a tally file named with the pid exists: " + path);
  const std::regex header(
      "^# flashproof-probe v2 status=(ok|failed|refused) state=final pid=" + std::to_string(child) +
      " cupti=[0-9]+( records=[0-9]+ incomplete=[0-9]+ dropped=[0-9]+ kernels=[0-9]+| reason=[^\n]+)\n");
  check(std::regex_search(text, header), "its first line is a final probe header: " + text.substr(0, text.find('\n')));
  if (text.find("status=ok") == std::string::npos) {
    check(text.find("reason=cuptiSubscribe") != std::string::npos, "a failure names the CUPTI call that failed");
  }

  const pid_t idle = run_child(argv[1], "");
  check(idle > 0, "with FLASHPROOF_KERNEL_TALLY unset the probe stays idle and the process runs on");
  const std::string leftover = std::string(dir) + "/tally-" + std::to_string(idle) + ".tsv";
  check(access(leftover.c_str(), F_OK) != 0, "and writes no file");

  if (fails == 0) {
    std::remove(path.c_str());
    rmdir(dir);
  } else {
    std::printf("working files kept in %s\n", dir);
  }
  return fails == 0 ? 0 : 1;
}
