#include "util/format_number.h"

#include <gtest/gtest.h>

#include <limits>

namespace fp {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(FormatNumber, EachFormatAndTheOneRuleForNonFiniteValues) {
  EXPECT_EQ(fmt("%.0f", 12.4), "12");
  EXPECT_EQ(fixed(1.23456, 3), "1.235");
  EXPECT_EQ(significant(1234567, 6), "1.23457e+06");
  EXPECT_EQ(readable(1234.4), "1234");
  EXPECT_EQ(readable(123.44), "123.4");
  EXPECT_EQ(readable(12.344), "12.34");
  EXPECT_EQ(readable(0.012344), "0.0123");
  EXPECT_EQ(table_figure(0.12345), "0.123");
  EXPECT_EQ(table_figure(-1234.56), "-1234.6");
  EXPECT_EQ(pct(0.1234), "+12.3%");
  EXPECT_EQ(pct(-0.05), "-5.0%");
  EXPECT_EQ(significant_pct(0.01234, 3), "1.23%");
  EXPECT_EQ(significant_pct(9.996, 3), "1000%");  // %.3g would write 1e+03
  // Not a finite number: "-" for a number, "n/a" for a percent, or the word the caller names.
  for (double bad : {kNan, kInf, -kInf}) {
    EXPECT_EQ(fmt("%.1f", bad), "-");
    EXPECT_EQ(fixed(bad, 3), "-");
    EXPECT_EQ(significant(bad, 6), "-");
    EXPECT_EQ(readable(bad), "-");
    EXPECT_EQ(table_figure(bad), "-");
    EXPECT_EQ(pct(bad), "n/a");
    EXPECT_EQ(significant_pct(bad, 3), "n/a");
    EXPECT_EQ(fixed(bad, 3, "nan"), "nan");
  }
}

}  // namespace
}  // namespace fp
