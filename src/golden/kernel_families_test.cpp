#include "golden/kernel_families.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Samples of `launches` probed launches with these shares in each (mma 0.92 / vec 0.08 style).
std::vector<FamilySamples> samples(const std::vector<std::vector<FamilyLaunchShare>>& launches) {
  std::vector<FamilySamples> s;
  for (const auto& l : launches) add_probed_launch(s, l);
  return s;
}

const std::vector<FamilyLaunchShare> kMmaVec = {{"fattn-mma", true, 0.92}, {"fattn-vec", true, 0.08}};

TEST(KernelFamilies, LaunchesAlignFamiliesThatComeAndGo) {
  auto s = samples({{{"fattn-mma", true, 0.9}, {"fattn-vec", true, 0.1}}, {{"fattn-mma", true, 1.0}}, {{"soft_max", false, 1.0}}});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].family, "fattn-mma");
  EXPECT_THAT(s[0].shares, ElementsAre(0.9, 1.0, 0.0));
  EXPECT_THAT(s[1].shares, ElementsAre(0.1, 0.0, 0.0));
  EXPECT_EQ(s[2].family, "soft_max");
  EXPECT_FALSE(s[2].fused);
  EXPECT_THAT(s[2].shares, ElementsAre(0.0, 0.0, 1.0));
  add_probed_launch(s, {});  // a launch without attention kernels is no share of 0
  EXPECT_EQ(s[0].shares.size(), 3u);
}

TEST(KernelFamilies, GoldenKeepsMedianSpreadAndLaunches) {
  auto g = golden_kernel_families(samples({{{"fattn-mma", true, 0.90}}, {{"fattn-mma", true, 0.92}}, {{"fattn-mma", true, 0.95}}}));
  ASSERT_EQ(g.count("fattn-mma"), 1u);
  EXPECT_DOUBLE_EQ(g["fattn-mma"].share_median, 0.92);
  EXPECT_NEAR(g["fattn-mma"].share_spread, 0.02, 1e-12);
  EXPECT_EQ(g["fattn-mma"].n, 3u);
  EXPECT_EQ(kernel_families_text(g), "fattn-mma 92%");
}

TEST(KernelFamilies, SameSetPasses) {
  auto golden = golden_kernel_families(samples({kMmaVec, kMmaVec, kMmaVec, kMmaVec}));
  auto c = compare_kernel_families(golden, samples({{{"fattn-mma", true, 0.91}, {"fattn-vec", true, 0.09}}}));
  EXPECT_FALSE(c.failed());
  EXPECT_THAT(c.failures(), IsEmpty());
  EXPECT_EQ(c.swap, "");
  ASSERT_EQ(c.lines().size(), 2u);
  EXPECT_THAT(c.lines()[0], HasSubstr("fattn-mma: 92% -> 91% of the attention GPU time (same; golden 4, this run 1 probed launches"));
}

TEST(KernelFamilies, SwapIsNamedWithBothShares) {
  auto golden = golden_kernel_families(samples({kMmaVec, kMmaVec, kMmaVec}));
  auto c = compare_kernel_families(golden, samples({{{"fattn-vec", true, 0.88}, {"fattn-helpers", true, 0.12}}}));
  EXPECT_TRUE(c.failed());
  EXPECT_EQ(c.swap, "fattn-mma kernels replaced by fattn-vec, fattn-helpers kernels: share 92% -> 0% / 8.0% -> 88%, 0% -> 12%");
  EXPECT_THAT(c.failures(), ElementsAre("KERNEL SWAP: " + c.swap));
}

TEST(KernelFamilies, FusedReplacedByUnfused) {
  auto golden = golden_kernel_families(samples({{{"fattn-mma", true, 1.0}}, {{"fattn-mma", true, 1.0}}}));
  auto c = compare_kernel_families(golden, samples({{{"soft_max", false, 1.0}}}));
  EXPECT_EQ(c.swap, "fattn-mma kernels replaced by soft_max kernels: share 100% -> 0% / 0% -> 100%");
  EXPECT_THAT(c.lines()[1], HasSubstr("soft_max (unfused): 0% -> 100%"));
}

TEST(KernelFamilies, LossAloneAndNewAlone) {
  auto golden = golden_kernel_families(samples({kMmaVec, kMmaVec, kMmaVec}));
  // The family that grew in its place is named: mma took vec's share.
  auto replaced = compare_kernel_families(golden, samples({{{"fattn-mma", true, 1.0}}}));
  EXPECT_EQ(replaced.swap, "fattn-vec kernels replaced by fattn-mma kernels: share 8.0% -> 0% / 92% -> 100%");
  // A small family lost while the others stay within the minimum effect: a loss alone, still a failure.
  const std::vector<FamilyLaunchShare> mostly_mma = {{"fattn-mma", true, 0.97}, {"fattn-helpers", true, 0.03}};
  auto lost = compare_kernel_families(golden_kernel_families(samples({mostly_mma, mostly_mma, mostly_mma})),
                                      samples({{{"fattn-mma", true, 1.0}}}));
  EXPECT_EQ(lost.swap, "fattn-helpers kernels lost: share 3.0% -> 0%");
  EXPECT_TRUE(lost.failed());
  EXPECT_THAT(lost.failures(), ElementsAre("KERNEL SWAP: fattn-helpers kernels lost: share 3.0% -> 0%"));
  // A new family under the minimum effect is reported, not failed.
  auto small = compare_kernel_families(golden, samples({{{"fattn-mma", true, 0.90}, {"fattn-vec", true, 0.08},
                                                         {"fattn-helpers", true, 0.02}}}));
  EXPECT_FALSE(small.failed());
  EXPECT_EQ(small.swap, "");
  EXPECT_THAT(small.lines().back(), HasSubstr("fattn-helpers: 0% -> 2.0% of the attention GPU time (new, under the minimum effect"));
}

TEST(KernelFamilies, ShareMovesBeyondNoiseFailOnlyWhenTheGoldenResolvesThem) {
  // Golden of 5 probed launches with a tiny spread: a 20-point move is beyond noise.
  const std::vector<FamilyLaunchShare> a = {{"fattn-mma", true, 0.60}, {"fattn-vec", true, 0.40}};
  const std::vector<FamilyLaunchShare> b = {{"fattn-mma", true, 0.61}, {"fattn-vec", true, 0.39}};
  auto golden = golden_kernel_families(samples({a, b, a, b, a}));
  auto moved = compare_kernel_families(golden, samples({{{"fattn-mma", true, 0.40}, {"fattn-vec", true, 0.60}}}));
  EXPECT_TRUE(moved.failed());
  EXPECT_EQ(moved.swap, "");
  ASSERT_EQ(moved.failures().size(), 2u);
  EXPECT_THAT(moved.failures()[0], HasSubstr("KERNEL SHARE MOVED: fattn-mma: 60% -> 40% of the attention GPU time (moved"));
  // Two probed launches give no spread: the same move is within noise, reported with what to do.
  auto two = golden_kernel_families(samples({a, b}));
  auto unresolved = compare_kernel_families(two, samples({{{"fattn-mma", true, 0.40}, {"fattn-vec", true, 0.60}}}));
  EXPECT_FALSE(unresolved.failed());
  EXPECT_THAT(unresolved.lines()[0], HasSubstr("within_noise"));
  EXPECT_THAT(unresolved.lines()[0], HasSubstr("noise band unknown"));
  EXPECT_THAT(unresolved.lines()[0], HasSubstr("the golden cannot resolve this move"));
}

}  // namespace
}  // namespace fp
