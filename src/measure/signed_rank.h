// Wilcoxon's signed-rank test, exact, one-sided: is the centre of x above `bound`?
//
// The side-by-side gate uses it beside the trimmed mean (measure/paired_stats.h): a "regression"
// needs both. With few blocks, trimming can leave a handful of clustered values whose winsorized
// spread understates the block spread: on identical builds of cases/generic-openai-llama-server.json
// the blocks +49 +32 +26 +44 -25 +26 +74 -48 +50 +39% gave a trimmed mean of +37% with Yuen's p 0.001
// against a 17% bound, while their signs and ranks (two of the three largest departures below it)
// give p 0.2. The ranks of every block, trimmed or not, are what a few lucky central values cannot fake.
#pragma once

#include <vector>

namespace fp {

// One-sided p of H0 "x - bound is symmetric about 0 or below" against "above": the probability,
// under random signs, of a sum of the positive ranks of |x_i - bound| at least the one observed.
// Exact (the permutation distribution over all 2^n sign patterns, by counting), with mid-ranks for
// tied magnitudes; values within 1e-12 of the bound are dropped (Wilcoxon's convention). 1 when none
// is left. Non-finite values are ignored.
double signed_rank_p_above(const std::vector<double>& x, double bound);

// The smallest p signed_rank_p_above can give on n values: 2^-n (every value above the bound).
double signed_rank_smallest_p(int n);

}  // namespace fp
