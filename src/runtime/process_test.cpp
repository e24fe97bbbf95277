#include "runtime/process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "runtime/launch_guardian.h"
#include "util/text.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

std::string log_path(const char* name) { return ::testing::TempDir() + "/fp-process-" + name + "-" + std::to_string(getpid()) + ".log"; }

// Orphaned grandchildren are reaped by whoever adopts them, not by us: a zombie is not "left
// behind", a running process is. Allow a moment for SIGKILL to land.
bool group_alive(pid_t pgid) {
  for (int i = 0; i < 50; ++i) {
    if (live_processes_in_group(pgid).empty()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(Process, NotFoundFailsAtOnceNamingTheExecutable) {
  auto p = Process::spawn({"/no/such/runtime", "--help"}, {}, log_path("nf"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("cannot execute \"/no/such/runtime\""));
  EXPECT_THAT(p.error().message, HasSubstr("not found"));
}

TEST(Process, NotExecutable) {
  const std::string path = log_path("noexec");
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("data", f);
  std::fclose(f);
  auto p = Process::spawn({path}, {}, log_path("noexec-log"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("Permission denied"));
}

TEST(Process, CapturesStdoutStderrAndEnvironment) {
  const std::string log = log_path("cap");
  ::unlink(log.c_str());
  auto p = Process::spawn({"/bin/sh", "-c", "echo out $FP_TEST_VAR; echo err >&2"}, {{"FP_TEST_VAR", "42"}}, log);
  ASSERT_TRUE(p.ok()) << p.error().message;
  while (p->running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(p->poll().code, 0);
  auto text = read_file(log);
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr("out 42"));
  EXPECT_THAT(*text, HasSubstr("err"));
}

TEST(Process, StopTakesTheWholeGroupIncludingGrandchildren) {
  auto p = Process::spawn({"/bin/sh", "-c", "sleep 60 & sleep 60 & wait"}, {}, log_path("group"));
  ASSERT_TRUE(p.ok());
  const pid_t pgid = p->pid();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_GE(live_processes_in_group(pgid).size(), 3u);
  ExitInfo e = p->stop(2.0);
  EXPECT_TRUE(e.exited);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(group_alive(pgid)) << "a process of the runtime's group was left behind";
}

TEST(Process, EscalatesToSigkillWhenTermIsIgnored) {
  auto p = Process::spawn({"/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"}, {}, log_path("term"));
  ASSERT_TRUE(p.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto t0 = std::chrono::steady_clock::now();
  ExitInfo e = p->stop(0.3);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(e.signal, SIGKILL);
  EXPECT_LT(took, 3.0);
  EXPECT_FALSE(group_alive(p->pid()));
}

TEST(Process, StopsAStoppedGroup) {
  auto p = Process::spawn({"/bin/sleep", "60"}, {}, log_path("stopped"));
  ASSERT_TRUE(p.ok());
  p->signal_group(SIGSTOP);
  ExitInfo e = p->stop(1.0);
  EXPECT_TRUE(e.exited);
  EXPECT_FALSE(group_alive(p->pid()));
}

TEST(Process, DestructorLeavesNothingBehind) {
  pid_t pgid;
  {
    auto p = Process::spawn({"/bin/sleep", "60"}, {}, log_path("dtor"));
    ASSERT_TRUE(p.ok());
    pgid = p->pid();
  }
  EXPECT_FALSE(group_alive(pgid));
}

TEST(Process, DescribesHowItEnded) {
  auto p = Process::spawn({"/bin/sh", "-c", "exit 3"}, {}, log_path("exit"));
  ASSERT_TRUE(p.ok());
  while (p->running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(p->poll().describe(), "exited with status 3");
}

// Issue 44 item 5: a wrapper that does not exec (`llama-server "$@" 2>&1 | cat`) leaves the
// runtime a grandchild that its parent reaps; waitpid on the wrapper says "exited with status 0"
// when the server crashed. The group is watched: the crashed grandchild is named with its signal.
TEST(Process, NamesTheCrashOfAGrandchildBehindAWrapper) {
  auto p = Process::spawn({"/bin/sh", "-c", "sleep 60 | cat; sleep 60"}, {}, log_path("wrapped"));
  ASSERT_TRUE(p.ok()) << p.error().message;
  pid_t server = 0;
  for (int i = 0; i < 100 && !server; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    p->watch_group();
    for (pid_t q : live_processes_in_group(p->pid())) {
      auto cmd = read_file("/proc/" + std::to_string(q) + "/cmdline");
      if (q != p->pid() && cmd && starts_with(*cmd, std::string("sleep\0", 6))) server = q;
    }
  }
  ASSERT_NE(server, 0) << "the wrapper's child never started";
  p->watch_group();
  ::kill(server, SIGSEGV);
  ExitInfo e;
  for (int i = 0; i < 100; ++i) {  // the wrapper lingers (its second sleep): the crash ends the runtime
    e = p->runtime_end();
    if (e.exited) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!e.exited) GTEST_SKIP() << "this kernel does not report a non-child's exit status (PIDFD_INFO_EXIT, Linux 6.15)";
  EXPECT_EQ(e.signal, SIGSEGV);
  EXPECT_THAT(e.describe(), HasSubstr("killed by signal 11"));
  EXPECT_THAT(e.describe(), HasSubstr("[sleep (pid " + std::to_string(server) + "), in the process group of sh (pid " +
                                      std::to_string(p->pid()) + "), which flashproof started and which did not exec it]"));
  EXPECT_TRUE(p->running()) << "the wrapper itself is still running";
  p->stop(1.0);
  // What stop() did to the rest of the group is not the runtime's end.
  EXPECT_EQ(p->runtime_end().signal, SIGSEGV);
}

TEST(Process, AShellsStatusAbove128IsExplained) {
  ExitInfo e;
  e.exited = true;
  e.code = 139;
  EXPECT_EQ(e.describe(), "exited with status 139 (128 + 11: a shell's way of saying its child was killed by signal 11 (Segmentation fault))");
}

TEST(Process, ProgramNameSeesThroughTheLoader) {
  EXPECT_EQ(program_name({"/usr/bin/llama-server", "-m", "x"}), "llama-server");
  EXPECT_EQ(program_name({"/p/lib/ld-linux-x86-64.so.2", "--library-path", "/p/lib", "/p/usr/bin/llama-server", "-m", "x"}),
            "llama-server");
  EXPECT_EQ(program_name({}), "?");
}

// Issue 47: flashproof SIGKILLed while a wrapper's grandchild serves. PR_SET_PDEATHSIG reaches only
// the wrapper; the launch guardian kills the whole group once the harness is gone.
TEST(Process, NothingOutlivesAHarnessKilledWithSigkill) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t harness = ::fork();
  ASSERT_GE(harness, 0);
  if (harness == 0) {  // a stand-in for flashproof: launches a wrapper that does not exec, then waits
    ::close(fds[0]);
    auto p = Process::spawn({"/bin/sh", "-c", "sleep 60 | cat"}, {}, log_path("guarded"));
    const pid_t pgid = p.ok() ? p->pid() : 0;
    const pid_t guardian = launch_guardian_pid();
    ssize_t ignored = ::write(fds[1], &pgid, sizeof pgid);
    ignored = ::write(fds[1], &guardian, sizeof guardian);
    (void)ignored;
    ::pause();
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t pgid = 0, guardian = 0;
  ASSERT_EQ(::read(fds[0], &pgid, sizeof pgid), static_cast<ssize_t>(sizeof pgid));
  ASSERT_EQ(::read(fds[0], &guardian, sizeof guardian), static_cast<ssize_t>(sizeof guardian));
  ::close(fds[0]);
  ASSERT_GT(pgid, 0);
  ASSERT_GT(guardian, 0) << "no guardian was started";
  for (int i = 0; i < 50 && live_processes_in_group(pgid).size() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(live_processes_in_group(pgid).size(), 3u) << "sh, sleep and cat";
  ::kill(harness, SIGKILL);
  ::waitpid(harness, nullptr, 0);
  EXPECT_FALSE(group_alive(pgid)) << "the wrapper's children outlived the harness";
  // The guardian leaves once its work is done (reaped by whoever adopted it).
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    auto stat = read_file("/proc/" + std::to_string(guardian) + "/stat");
    gone = !stat || stat->find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the guardian " << guardian << " is still running";
}

TEST(Process, PeakRssOfALiveProcess) {
  auto rss = peak_rss_bytes(getpid());
  ASSERT_TRUE(rss.has_value());
  EXPECT_GT(*rss, 1024u * 1024u);
  EXPECT_FALSE(peak_rss_bytes(999999999).has_value());
}

}  // namespace
}  // namespace fp
