#include "util/split_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;

TEST(SplitList, ItemsTrimmedEmptyOnesKept) {
  EXPECT_THAT(split_list("a, b,,c "), ElementsAre("a", "b", "", "c"));
  EXPECT_THAT(split_list(""), ElementsAre(""));
  EXPECT_THAT(split_list("q8_0/f16"), ElementsAre("q8_0/f16"));
  EXPECT_THAT(split_list("1:2", ':'), ElementsAre("1", "2"));
}

TEST(SplitList, EmptyItemsAndRepeatsDroppedOnRequest) {
  EXPECT_THAT(split_list("a, b,,c ", ',', ListItems::NonEmpty), ElementsAre("a", "b", "c"));
  EXPECT_TRUE(split_list(" ", ',', ListItems::NonEmpty).empty());
  EXPECT_THAT(split_list("a, b,a,,b ", ',', ListItems::NonEmptyUnique), ElementsAre("a", "b"));
}

}  // namespace
}  // namespace fp
