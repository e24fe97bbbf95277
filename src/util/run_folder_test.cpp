#include "util/run_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::temp_directory_path() / ("fp_run_folder_" + std::to_string(getpid()) + "_" +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
    fs::remove_all(root_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root_);
  }
  std::string root_;
};

TEST_F(RunFolderTest, ANewFolderIsCreatedAndLocked) {
  const std::string dir = root_ + "/a/b";
  auto claim = claim_run_folder(dir, "--out");
  ASSERT_TRUE(claim.ok()) << claim.error().message;
  EXPECT_TRUE(fs::is_directory(dir));
  std::ifstream lock(dir + "/" + kRunFolderLock);
  pid_t pid = 0;
  lock >> pid;
  EXPECT_EQ(pid, getpid());
}

// Issue 47: a reused --out mixed three runs' logs into one verdict.
TEST_F(RunFolderTest, AFolderHoldingAnEarlierRunIsRefused) {
  const std::string dir = root_ + "/run";
  { ASSERT_TRUE(claim_run_folder(dir, "--out").ok()); }
  std::ofstream(dir + "/evidence.log") << "an earlier run\n";
  std::ofstream(dir + "/result.txt") << "status = pass\n";
  auto again = claim_run_folder(dir, "--out");
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.error().message, HasSubstr(dir + " already holds an earlier run or other files (evidence.log, result.txt)"));
  EXPECT_THAT(again.error().message, HasSubstr("rm -r " + dir));
  EXPECT_THAT(again.error().message, HasSubstr("or give --out a new folder"));
}

// Only the lock file of an earlier claim (a run refused or ended before it wrote anything): free.
TEST_F(RunFolderTest, ALeftoverLockFileAloneIsNoEarlierRun) {
  const std::string dir = root_ + "/run";
  { ASSERT_TRUE(claim_run_folder(dir, "").ok()); }
  EXPECT_TRUE(claim_run_folder(dir, "").ok());
}

// Two runs at once on one folder: the second is refused, naming the lock and the first one's pid.
TEST_F(RunFolderTest, ASecondRunOnAHeldFolderIsRefused) {
  const std::string dir = root_ + "/run";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    auto claim = claim_run_folder(dir, "--out");
    char c = claim.ok() ? 'y' : 'n';
    ssize_t ignored = ::write(ready[1], &c, 1);
    (void)ignored;
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto second = claim_run_folder(dir, "--out");
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message, HasSubstr(dir + " is in use by another flashproof run (pid " + std::to_string(holder) +
                                                ", which holds the lock " + dir + "/" + kRunFolderLock + ")"));
  // The kernel drops the lock with its holder, SIGKILL included: never stale.
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_TRUE(claim_run_folder(dir, "--out").ok());
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(RunFolderTest, AMadeUpNameThatIsTakenGetsASuffix) {
  const std::string dir = root_ + "/20261207T000000Z-1";
  EXPECT_EQ(unused_folder_name(dir), dir);
  fs::create_directories(dir);
  EXPECT_EQ(unused_folder_name(dir), dir + "-2");
  fs::create_directories(dir + "-2");
  EXPECT_EQ(unused_folder_name(dir), dir + "-3");
}

}  // namespace
}  // namespace fp
