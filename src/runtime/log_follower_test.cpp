#include "runtime/log_follower.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class LogFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fp-follow-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    log_ = (dir_ / "server.log").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void append(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }
  std::string copied() { return *read_file((dir_ / "window.log").string()); }

  fs::path dir_;
  std::string log_;
};

TEST_F(LogFollowerTest, OnlyLinesWrittenAfterTheStartCount) {
  append(log_, "old start-up: flash_attn = enabled\n");
  auto f = LogFollower::follow_file(log_);
  ASSERT_TRUE(f.ok()) << f.error().message;
  append(log_, "new line 1\n");
  append(log_, "new line 2\n");
  auto n = (*f)->finish((dir_ / "window.log").string(), 0.05, 1.0);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(copied(), "new line 1\nnew line 2\n");
  EXPECT_EQ(*n, copied().size());
  EXPECT_EQ((*f)->source(), "log file " + log_);
}

TEST_F(LogFollowerTest, WaitsForLinesStillArriving) {
  auto f = LogFollower::follow_file((append(log_, ""), log_));
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    append(log_, "late\n");
  });
  auto n = (*f)->finish((dir_ / "window.log").string(), 0.3, 3.0);
  late.join();
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(copied(), "late\n");
}

TEST_F(LogFollowerTest, RotationReadsTheOldFileToItsEndThenTheNewOne) {
  append(log_, "before\n");
  auto f = LogFollower::follow_file(log_);
  ASSERT_TRUE(f.ok()) << f.error().message;
  append(log_, "old tail\n");
  fs::rename(log_, log_ + ".1");
  append(log_, "new head\n");
  ASSERT_TRUE((*f)->finish((dir_ / "window.log").string(), 0.05, 1.0).ok());
  EXPECT_EQ(copied(), "old tail\nnew head\n");
  EXPECT_THAT(join((*f)->notes(), "\n"), HasSubstr("was replaced during the run (rotation)"));
}

TEST_F(LogFollowerTest, TruncationInPlaceReadsFromTheStart) {
  append(log_, "a long line before the run began\n");
  auto f = LogFollower::follow_file(log_);
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::ofstream(log_, std::ios::trunc) << "after\n";
  ASSERT_TRUE((*f)->finish((dir_ / "window.log").string(), 0.05, 1.0).ok());
  EXPECT_EQ(copied(), "after\n");
  EXPECT_THAT(join((*f)->notes(), "\n"), HasSubstr("truncated during the run"));
}

TEST_F(LogFollowerTest, MissingFileIsAnErrorNamingIt) {
  auto f = LogFollower::follow_file((dir_ / "nope.log").string());
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message, AllOf(HasSubstr("nope.log"), HasSubstr("No such file")));
}

// The command replays older lines first (as journalctl -f does), then follows: the replay is
// dropped, and the command is stopped at the end with nothing left behind.
TEST_F(LogFollowerTest, CommandReplayIsDroppedAndTheCommandIsStopped) {
  append(log_, "old 1\nold 2\n");
  const std::string out = (dir_ / "command.out").string();
  auto f = LogFollower::follow_command({"tail", "-n", "+1", "-F", log_}, out, 0.3, 5.0);
  ASSERT_TRUE(f.ok()) << f.error().message;
  append(log_, "new after start\n");
  ASSERT_TRUE((*f)->finish((dir_ / "window.log").string(), 0.3, 3.0).ok());
  EXPECT_EQ(copied(), "new after start\n");
  EXPECT_THAT(join((*f)->notes(), "\n"), HasSubstr("dropped the 12 bytes"));
  EXPECT_EQ((*f)->source(), "output of tail -n +1 -F " + log_);
  // tail is gone: appending now reaches no follower.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto size = fs::file_size(out);
  append(log_, "after the end\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(fs::file_size(out), size);
}

TEST_F(LogFollowerTest, CommandThatEndsAtOnceIsAnError) {
  auto f = LogFollower::follow_command({"sh", "-c", "echo no such unit; exit 1"}, (dir_ / "c.out").string(), 0.5, 5.0);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message, AllOf(HasSubstr("exited with status 1"), HasSubstr("no such unit"), HasSubstr("follow mode")));
  auto missing = LogFollower::follow_command({"/no/such/journalctl", "-f"}, (dir_ / "d.out").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/no/such/journalctl"));
}

}  // namespace
}  // namespace fp
