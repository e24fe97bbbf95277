// Paired, blocked statistics for two arms measured side by side (the old and the new build, or the
// flag off and on): the side-by-side gate's arithmetic, free of any runtime.
//
// The design it assumes (flow/paired_runner.h): blocks, each one fresh launch of arm A and one of
// arm B, in ABBA order (A first in even blocks, B first in odd ones); in every launch the same
// prompts in the same order. The unit is one launch x one prompt: the median of that prompt's
// repetitions in that launch; requests or tokens are never pooled across launches.
//
// Per figure:
//  1. per block and prompt, the paired log-ratio r = log(B / A), signed so that r > 0 means B is
//     worse (for a higher-is-better figure r = log(A / B));
//  2. per block, d = the mean of r over the prompts (prompts of one block share its two launches,
//     so they are not independent: the block is the independent unit);
//  3. d_k = theta + gamma * s_k + e_k, where s_k = +1 when A ran first in block k and -1 otherwise:
//     gamma absorbs a position effect (the second launch of a block systematically faster or
//     slower, e.g. a warmer page cache), which the ABBA order balances. Least squares gives
//     theta = (mean of the A-first blocks + mean of the B-first blocks) / 2, and the residual
//     variance has n - 2 degrees of freedom. With fewer than three blocks of either order the
//     position term is dropped (theta = mean, n - 1 degrees of freedom): at four blocks it would
//     leave 2 degrees of freedom, too few for a variance estimate to be trusted;
//  4. a Student-t interval for theta, and the one-sided p-value of "B is not worse" (theta <= 0).
// Holm's step-down correction across the gated figures of a case controls the family-wise rate of
// false "regression" calls. Unit tests check the false-alarm rate and the power on simulated data.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "measure/stats.h"

namespace fp {

// One launch x one prompt of each arm in one block.
struct PairedUnit {
  int block = 0;        // 0-based block index
  bool a_first = true;  // arm A was launched first in this block
  std::string prompt;   // prompt id ("" for a per-launch figure such as cold start)
  double a = kNoValue;  // arm A's value (median of the prompt's repetitions in A's launch)
  double b = kNoValue;  // arm B's value
};

struct PairedEstimate {
  size_t blocks = 0;       // blocks with at least one usable unit
  size_t units = 0;        // usable units (finite, positive a and b)
  double worse_log = kNoValue;  // theta: estimated log(B/A), > 0 means B is worse
  double low_log = kNoValue;    // interval for theta at the requested confidence
  double high_log = kNoValue;
  double se_log = kNoValue;     // standard error of theta
  double block_sd_log = kNoValue;  // residual standard deviation of one block's value
  int df = 0;
  double p_worse = kNoValue;    // one-sided p of H0: theta <= 0 (B not worse)
  bool order_term = false;      // the position term was fitted
  double order_log = kNoValue;  // gamma: how much worse the second launch of a block ran (log)
  // Relative forms, exp(x) - 1: +0.05 means B is 5% worse.
  double worse_rel() const;
  double low_rel() const;
  double high_rel() const;
};

// The estimate for one figure. Units with a non-finite or non-positive value are ignored.
PairedEstimate estimate_paired(const std::vector<PairedUnit>& units, bool lower_is_better, double confidence = 0.95);

// Student's t distribution: CDF and quantile (df >= 1).
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Holm's step-down adjusted p-values (same order as the input); NaN stays NaN and is not counted.
std::vector<double> holm_adjust(const std::vector<double>& p);

enum class TimingVerdict { regression, no_regression, unresolved };
const char* to_string(TimingVerdict v);

// One gated figure's decision.
struct FigureDecision {
  std::string figure;
  bool lower_is_better = true;
  PairedEstimate estimate;
  double min_effect = 0.05;      // relative worsening worth failing
  double p_holm = kNoValue;      // Holm-adjusted one-sided p of "not worse"
  TimingVerdict verdict = TimingVerdict::unresolved;
  std::string why;               // one plain sentence
  std::optional<int> more_blocks;  // unresolved: blocks more that would likely settle it
};

// The gate looks at the data again after every pair of blocks, and every look is a chance to decide
// wrongly: at a one-sided 2.5% per look, 10 looks call identical builds a regression far more often
// than 2.5%. So each look decides at alpha_look = 0.5% one-sided (a Pocock-style constant boundary:
// about 2.5% overall for up to ~20 looks), for both outcomes. The unit tests simulate the whole
// sequential procedure and check the overall rates.
struct DecisionOptions {
  double alpha_look = 0.005;  // one-sided level of each look, for "regression" (after Holm) and "no regression"
  double confidence = 0.95;   // the interval reported with the estimate
  int min_blocks = 4;         // fewer blocks: always unresolved
};

// The three-way decision per figure, with d = log(1 + min_effect) and the decision bound
// upper = theta + t(1 - alpha_look, df) * se:
//   no regression  upper < d (any change is smaller than the minimum effect; a faster B is always
//                  this once resolved);
//   regression     B is worse with Holm-adjusted one-sided p < alpha_look and the estimate is at
//                  least d / 2 (significant, and not a negligible shift);
//   unresolved     neither: more blocks are needed.
struct FigureInput {
  std::string figure;
  bool lower_is_better = true;
  double min_effect = 0.05;
  std::vector<PairedUnit> units;
};
std::vector<FigureDecision> decide_figures(const std::vector<FigureInput>& figures, const DecisionOptions& options = {});

// The figure's decision in one line, arm B named `b_name`: "ttft_ms: regression: candidate worse by
// +6.1% (95% CI +4.0% .. +8.3%), Holm p 0.0004, 8 blocks, minimum effect 5%; ...".
std::string decision_line(const FigureDecision& d, const std::string& b_name = "B");

}  // namespace fp
