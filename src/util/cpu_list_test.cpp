#include "util/cpu_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CpuList, ParsesItemsAndRangesSortedWithoutRepeats) {
  auto l = parse_cpu_list("8, 0-2,2,5", 16);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_THAT(*l, ElementsAre(0, 1, 2, 5, 8));
  EXPECT_EQ(cpu_list_text(*l), "0-2,5,8");
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}), "0-14");
  EXPECT_EQ(cpu_list_text({}), "");
}

TEST(CpuList, ErrorsNameTheItemAndWhatIsValid) {
  EXPECT_THAT(parse_cpu_list("0-3,x", 4).error().message, HasSubstr("\"x\": not a CPU number"));
  EXPECT_THAT(parse_cpu_list("3-1", 4).error().message, HasSubstr("\"3-1\": the range runs backwards"));
  EXPECT_THAT(parse_cpu_list("0-4", 4).error().message, HasSubstr("this machine has CPUs 0-3"));
  EXPECT_THAT(parse_cpu_list("", 4).error().message, HasSubstr("an empty item"));
  EXPECT_THAT(parse_cpu_list("1,,2", 4).error().message, HasSubstr("expected CPU numbers below 4"));
  EXPECT_FALSE(parse_cpu_list("-1", 4).ok());
}

}  // namespace
}  // namespace fp
