#include "runtime/launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

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

// What result files print: {port} stays, the model is the path as the case wrote it.
TEST(Launcher, ShownArgvKeepsThePortPlaceholderAndTheModelAsWritten) {
  Case c;
  c.shape.context = 4096;
  c.model.path = "models/m.gguf";
  c.launch.argv = {"{runtime}", "-m", "{model}", "--port", "{port}", "--listen={host}:{port}", "-fa", "{flag}"};
  RuntimeCommand rt{{"/bin/server"}, "test"};
  EXPECT_THAT(shown_argv(c, rt, "on", {"-v"}),
              ElementsAre("/bin/server", "-m", "models/m.gguf", "--port", "{port}", "--listen=127.0.0.1:{port}", "-fa", "on", "-v"));
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

// Found by tests/concurrency: concurrent runs shared one scratch file for `--version`, so one run
// read another's output, or none ("its output has no version").
TEST(Launcher, ConcurrentVersionQueriesDoNotShareAFile) {
  const std::string scratch = ::testing::TempDir() + "/fp-version-concurrent";
  std::filesystem::remove_all(scratch);
  std::filesystem::create_directories(scratch);
  constexpr int kThreads = 4;
  std::vector<std::string> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Adapter a = fake_adapter();
      a.version_args = {"sleep 0.2; echo version: v" + std::to_string(i) + "; echo build: b" + std::to_string(i)};
      a.version_regex = "version: ([^\\n]+)";
      a.build_regex = "build: ([^\\n]+)";
      auto v = runtime_version(RuntimeCommand{{"/bin/sh", "-c"}, "test"}, a, scratch);
      got[i] = v ? v->text + "/" + v->build : "error: " + v.error().message;
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(got[i], "v" + std::to_string(i) + "/b" + std::to_string(i));
  EXPECT_TRUE(std::filesystem::is_empty(scratch)) << "version output files left in " << scratch;
  std::filesystem::remove_all(scratch);
}

}  // namespace
}  // namespace fp
