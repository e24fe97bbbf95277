#include "runtime/process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

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

TEST(Process, PeakRssOfALiveProcess) {
  auto rss = peak_rss_bytes(getpid());
  ASSERT_TRUE(rss.has_value());
  EXPECT_GT(*rss, 1024u * 1024u);
  EXPECT_FALSE(peak_rss_bytes(999999999).has_value());
}

}  // namespace
}  // namespace fp
