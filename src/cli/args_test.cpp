#include "cli/args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fp {
namespace {

struct Argv {
  explicit Argv(std::vector<std::string> a) : store(std::move(a)) {
    for (auto& s : store) ptrs.push_back(&s[0]);
  }
  int argc() { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> store;
  std::vector<char*> ptrs;
};

TEST(Args, ReadsOptionsValuesAndNumbers) {
  Argv v({"--out", "dir", "case.json", "--repetitions", "3", "--sustained-s", "1.5", "--quiet"});
  Args args("run", v.argc(), v.argv(), "usage\n");
  std::vector<std::string> seen;
  std::string out, positional;
  int reps = 0;
  double sustained = 0;
  bool quiet = false;
  while (args.next()) {
    if (args.arg() == "--out") out = args.value();
    else if (args.arg() == "--repetitions") reps = args.whole(0, 100000);
    else if (args.arg() == "--sustained-s") sustained = args.number(0, 100);
    else if (args.arg() == "--quiet") quiet = true;
    else if (!args.is_option()) positional = args.arg();
  }
  EXPECT_EQ(out, "dir");
  EXPECT_EQ(positional, "case.json");
  EXPECT_EQ(reps, 3);
  EXPECT_DOUBLE_EQ(sustained, 1.5);
  EXPECT_TRUE(quiet);
}

TEST(ArgsDeathTest, MissingValueIsAUsageErrorNamingTheOption) {
  Argv v({"--out"});
  Args args("run", v.argc(), v.argv(), "usage: flashproof run\n");
  ASSERT_TRUE(args.next());
  EXPECT_EXIT(args.value(), ::testing::ExitedWithCode(64), "flashproof run: --out needs a value\nusage: flashproof run");
}

TEST(ArgsDeathTest, NumbersOutsideTheirRangeAreUsageErrors) {
  Argv v({"--repetitions", "-1"});
  Args args("ab", v.argc(), v.argv(), "");
  ASSERT_TRUE(args.next());
  EXPECT_EXIT(args.whole(1, 1000), ::testing::ExitedWithCode(64),
              "flashproof ab: --repetitions \"-1\": expected a whole number from 1 to 1000");
  Argv w({"--rounds", "2x"});
  Args b("ab", w.argc(), w.argv(), "");
  ASSERT_TRUE(b.next());
  EXPECT_EXIT(b.whole(1, 10), ::testing::ExitedWithCode(64), "--rounds \"2x\": expected a whole number from 1 to 10");
  Argv x({"--sustained-s", "3601"});
  Args c("ab", x.argc(), x.argv(), "");
  ASSERT_TRUE(c.next());
  EXPECT_EXIT(c.number(0, 3600, "seconds of sustained load"), ::testing::ExitedWithCode(64),
              "--sustained-s \"3601\": expected a number from 0 to 3600 \\(seconds of sustained load\\)");
}

}  // namespace
}  // namespace fp
