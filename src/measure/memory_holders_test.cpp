#include "measure/memory_holders.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace fp {
namespace {

using ::testing::HasSubstr;

TEST(MemoryHolders, CommandLinesAndResidentMemoryAreReadFromProc) {
  EXPECT_EQ(joined_cmdline(std::string("llama-server\0-m\0/m/embed.gguf\0--port\08081\0", 42)), "llama-server -m /m/embed.gguf --port 8081");
  EXPECT_EQ(joined_cmdline(""), "");
  EXPECT_EQ(resident_bytes("Name:\tx\nVmHWM:\t  900 kB\nVmRSS:\t  812 kB\n"), 812u * 1024);
  EXPECT_FALSE(resident_bytes("Name:\tkthreadd\n"));  // a kernel thread holds none
  const OtherProcess self = describe_process(static_cast<unsigned>(::getpid()), 3u * 1024 * 1024);
  EXPECT_FALSE(self.command.empty());
  EXPECT_FALSE(self.command_line.empty());
  ASSERT_TRUE(self.mib);
  EXPECT_DOUBLE_EQ(*self.mib, 3.0);
  // A pid /proc does not show (NVML's pids are the host's): no name, never an invented one.
  EXPECT_EQ(describe_process(0x7ffffff0u, std::nullopt).command, "");
}

// A real host process found by its command line, with its resident memory; left out when it is in
// the runtime's process group; flashproof itself never.
TEST(MemoryHolders, HostProcessesAreFoundByTheirCommandLine) {
  const std::string marker = "fp-neighbour-test-" + std::to_string(::getpid());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sleep", marker.c_str(), "30", static_cast<char*>(nullptr));  // argv[0] is the marker
    ::_exit(127);
  }
  ::setpgid(child, child);
  std::vector<OtherProcess> found;
  for (int i = 0; i < 100 && found.empty(); ++i) {  // until the exec shows in /proc
    found = host_processes_matching({marker}, 0);
    if (found.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].pid, static_cast<unsigned>(child));
  EXPECT_EQ(found[0].command, "sleep");
  EXPECT_THAT(found[0].command_line, HasSubstr(marker + " 30"));
  ASSERT_TRUE(found[0].mib);
  EXPECT_GT(*found[0].mib, 0.0);
  EXPECT_TRUE(host_processes_matching({marker}, child).empty());  // the runtime's own group
  const std::string self = describe_process(static_cast<unsigned>(::getpid()), std::nullopt).command_line;
  for (const auto& p : host_processes_matching({self}, 0)) EXPECT_NE(p.pid, static_cast<unsigned>(::getpid()));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace fp
