#include "runtime/launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Adapter fake_adapter() {
  Adapter a;
  a.name = "fake";
  a.executable_var = "FP_TEST_FAKE_RUNTIME";
  a.executable_name = "fake-runtime-not-on-path";
  a.health_path = "/health";
  a.port_in_use_regex = "couldn't bind";
  return a;
}

TEST(Launcher, ExpandsPlaceholdersAndTheRuntimePrefix) {
  Case c;
  c.shape.context = 4096;
  c.seed = 7;
  c.launch.argv = {"{runtime}", "-m", "{model}", "--host", "{host}", "--port", "{port}", "-c", "{context}", "-fa", "{flag}",
                   "--seed={seed}"};
  RuntimeCommand rt{{"/lib/ld.so", "--library-path", "/x", "/bin/server"}, "test"};
  auto argv = expand_argv(c, rt, "/m.gguf", 8123, "on", {"-v"});
  EXPECT_THAT(argv, ElementsAre("/lib/ld.so", "--library-path", "/x", "/bin/server", "-m", "/m.gguf", "--host", "127.0.0.1",
                                "--port", "8123", "-c", "4096", "-fa", "on", "--seed=7", "-v"));
}

TEST(Launcher, LocatesTheRuntimeFromItsVariable) {
  Adapter a = fake_adapter();
  ::setenv("FP_TEST_FAKE_RUNTIME", "/bin/true", 1);
  auto cmd = locate_runtime(a);
  ASSERT_TRUE(cmd.ok()) << cmd.error().message;
  EXPECT_EQ(cmd->prefix.back(), "/bin/true");
  ::setenv("FP_TEST_FAKE_RUNTIME", "/no/such/binary", 1);
  auto bad = locate_runtime(a);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("$FP_TEST_FAKE_RUNTIME = \"/no/such/binary\": not an executable"));
  ::unsetenv("FP_TEST_FAKE_RUNTIME");
}

TEST(Launcher, FreePortIsOnLoopbackAndUsable) {
  auto p = free_loopback_port();
  ASSERT_TRUE(p.ok());
  EXPECT_GT(*p, 1024);
  EXPECT_LT(*p, 65536);
}

TEST(Launcher, ARuntimeThatExitsDuringStartupIsReportedWithItsLogTail) {
  const std::string log = ::testing::TempDir() + "/fp-launch-exit.log";
  LaunchSpec spec{{"/bin/sh", "-c", "echo loading model; echo 'error: bad magic' >&2; exit 1"}, {}, log, 1, 10};
  auto s = start_server(spec, fake_adapter());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("exited with status 1 before it was ready"));
  EXPECT_THAT(s.error().message, HasSubstr("| error: bad magic"));
}

TEST(Launcher, ARuntimeThatNeverBecomesReadyIsStoppedAfterTheBoundedWait) {
  const std::string log = ::testing::TempDir() + "/fp-launch-never.log";
  auto port = free_loopback_port();
  ASSERT_TRUE(port.ok());
  LaunchSpec spec{{"/bin/sh", "-c", "echo starting; exec sleep 60"}, {}, log, *port, 0.5};
  auto s = start_server(spec, fake_adapter());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("was not ready within 0 s"));
  EXPECT_THAT(s.error().message, HasSubstr("| starting"));
}

}  // namespace
}  // namespace fp
