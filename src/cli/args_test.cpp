#include "cli/args.h"

#include <gtest/gtest.h>

#include <optional>
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

// explain takes "--runtime=NAME" as well as "--runtime NAME"; other commands take the argument whole.
TEST(Args, InlineValuesOnlyWhenAccepted) {
  Argv v({"--runtime=llama-server", "--log", "x.log", "--require=", "plain=word"});
  Args args("explain", v.argc(), v.argv(), "");
  args.accept_inline_values();
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.arg(), "--runtime");
  EXPECT_EQ(args.given(), "--runtime=llama-server");
  EXPECT_TRUE(args.has_value());
  EXPECT_EQ(args.value(), "llama-server");
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.arg(), "--log");
  EXPECT_EQ(args.value(), "x.log");
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.arg(), "--require");
  EXPECT_TRUE(args.has_value());
  EXPECT_EQ(args.value(), "");
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.arg(), "plain=word");
  EXPECT_FALSE(args.has_value());
  EXPECT_FALSE(args.next());

  Argv w({"--out=dir"});
  Args whole("ab", w.argc(), w.argv(), "");
  ASSERT_TRUE(whole.next());
  EXPECT_EQ(whole.arg(), "--out=dir");
  EXPECT_FALSE(whole.has_value());
}

// gpus --resource-spec [FILE]: the next argument is the value unless it is an option.
TEST(Args, OptionalValueTakesTheNextArgumentUnlessItIsAnOption) {
  Argv v({"--resource-spec", "--assigned", "--resource-spec", "spec.json", "--resource-spec"});
  Args args("gpus", v.argc(), v.argv(), "");
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.optional_value(), std::nullopt);
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.arg(), "--assigned");
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.optional_value(), std::optional<std::string>("spec.json"));
  ASSERT_TRUE(args.next());
  EXPECT_EQ(args.optional_value(), std::nullopt);
  EXPECT_FALSE(args.next());
}

TEST(ArgsDeathTest, UsageErrorsWithAndWithoutTheUsage) {
  Argv v({"--frobnicate"});
  Args args("fingerprint", v.argc(), v.argv(), "usage: flashproof fingerprint\n");
  ASSERT_TRUE(args.next());
  EXPECT_EXIT(args.brief_usage_error("unknown argument \"--frobnicate\"; valid: --json"), ::testing::ExitedWithCode(64),
              "^flashproof fingerprint: unknown argument \"--frobnicate\"; valid: --json\n$");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(args.print_usage_error("unknown argument"), 64);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "flashproof fingerprint: unknown argument\nusage: flashproof fingerprint\n");
}

}  // namespace
}  // namespace fp
