// Paired, blocked statistics for two arms measured side by side (the old and the new build, or the
// flag off and on): the side-by-side gate's arithmetic, free of any runtime. The design on one page,
// with its references: docs/gate-design.md. Where each constant's value comes from:
// bench/calibration.md.
//
// The measurement design it assumes (flow/paired/paired_runner.h): blocks, each one fresh launch of
// arm A and one of arm B, in pairs of blocks whose orders are AB then BA or BA then AB at random; the
// same prompts in the same order in every launch. Per figure:
//  1. per block and prompt, the paired log-ratio log(B / A), signed so that > 0 means B is worse;
//  2. per block k, d_k = the mean of those over the prompts: the block is the independent unit;
//  3. d_k = theta + gamma s_k + e_k, s_k = +1 where A ran first, -1 where B did: least squares. At a
//     look (an even number of blocks) the orders are balanced, so theta is the plain mean of the d_k
//     and gamma the launch position's effect; the e_k independent, normal, one variance: Student's t
//     with n - 2 degrees of freedom for theta (Boost.Math);
//  4. two one-sided tests at each look (Schuirmann's TOST, with an indifference zone): "regression"
//     where theta > r = log(1 + kRegressionShare x minimum effect) is shown, "no regression" where
//     theta < d = log(1 + minimum effect) is;
//  5. the looks are fixed at the first look (LookSchedule): after 4, 6, 8, 12, 16, 24, 32, ... blocks
//     and at the budget's last block. Each look tests at kAlphaRegression and kAlphaNoRegression over
//     the number of looks, so by Bonferroni's inequality each wrong call, over the whole sequence,
//     happens at most that often however the looks correlate (alpha spending, the simplest split);
//  6. across a case's gated figures, Holm's step-down correction on the regression tests (family-wise
//     kAlphaRegression); "no regression" for the case needs every figure's (an intersection-union
//     test: no correction needed, Berger 1982).
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
  // The machine-speed reference beside each launch (ms, higher is slower); kNoValue: none. Reported
  // beside the estimate, never part of it (docs/gate-design.md: the reference can move with the arm).
  double machine_a = kNoValue, machine_b = kNoValue;
};

// The gate's tuning constants (six in all with kDefaultDecodeProbes, flow/paired/paired_runner.h).
// Each wrong call's rate over a whole sequential run, one-sided: "regression" where the true change
// is at most the regression bound (identical builds included: a false alarm blocks a release, so
// the stricter), "no regression" where it is at least the minimum effect.
inline constexpr double kAlphaRegression = 0.01;
inline constexpr double kAlphaNoRegression = 0.025;
// The regression bound as a share of the minimum effect: a change below 60% of it is never called a
// regression more often than kAlpha; between it and the minimum effect either answer is right.
inline constexpr double kRegressionShare = 0.6;
// The side-by-side gate's default budget in blocks (PairedPlan::budget_blocks), fixed in seconds at
// the first look ...
inline constexpr int kDefaultBudgetBlocks = 40;
// ... but never less than this many seconds (PairedPlan::budget_floor_s): a case whose blocks take
// about a second gets more blocks (bench/calibration.md).
inline constexpr double kDefaultBudgetFloorS = 180;

// When the gate looks: after `first` blocks (at least 4, even: the first count that leaves the
// t-test two degrees of freedom), then after 6, 8, 12, 16, 24, 32, 48, ... blocks (2^j and
// 3 x 2^(j-1)) beyond it, and last after `last` blocks (the budget's, even). Fixed at the first look
// (the budget in blocks is known there) and never changed; each look tests at kAlphaRegression and
// kAlphaNoRegression over the number of looks.
struct LookSchedule {
  std::vector<int> looks;
  double alpha_regression = kAlphaRegression;       // per look
  double alpha_no_regression = kAlphaNoRegression;  // per look
  LookSchedule(int first, int last);
  bool is_look(int blocks) const;
  // The first look after `blocks`; empty after the last.
  std::optional<int> next_after(int blocks) const;
};
// The first look of any schedule that starts at `first`.
int first_look(int first);

// One block's value of a figure.
struct BlockValue {
  int block = 0;                // 0-based block index
  bool a_first = true;
  double d = kNoValue;          // mean log-ratio over the block's prompts, > 0 means B worse
  double residual = kNoValue;   // d less theta and the position term
  double machine = kNoValue;    // log(machine B / machine A): > 0, B's launch had the slower machine
  double a = kNoValue;          // geometric mean of arm A's unit values over the block's prompts
  double b = kNoValue;          // the same for arm B
};

struct PairedEstimate {
  size_t blocks = 0;            // blocks with at least one usable unit
  size_t units = 0;             // usable units (finite, positive a and b)
  double worse_log = kNoValue;  // theta: estimated log(B/A), > 0 means B is worse
  double se_log = kNoValue;     // its standard error
  int df = 0;                   // blocks - 2 (the position term); 0 below 3 blocks
  double low_log = kNoValue;    // the interval for theta at the requested confidence
  double high_log = kNoValue;
  double order_log = kNoValue;  // gamma: how much worse the second launch of a block ran (log)
  // The spread of one block's value (the residual standard deviation): what sizes the blocks a
  // decision needs.
  double block_sd_log = kNoValue;
  // The machine reference: log(B / A) averaged over the blocks where both launches carry one.
  // Reported only.
  double machine_log = kNoValue;
  std::vector<BlockValue> block_values;  // in block order
  // Relative forms, exp(x) - 1: +0.05 means B is 5% worse.
  double worse_rel() const;
  double low_rel() const;
  double high_rel() const;
};

// The estimate for one figure. Units with a non-finite or non-positive value are ignored.
PairedEstimate estimate_paired(const std::vector<PairedUnit>& units, bool lower_is_better, double confidence = 0.95);

// Student's t distribution (Boost.Math): CDF and quantile (df > 0); NaN outside the domain.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Holm's step-down adjusted p-values (same order as the input); NaN stays NaN and is not counted.
std::vector<double> holm_adjust(const std::vector<double>& p);

enum class TimingVerdict { regression, no_regression, unresolved };
const char* to_string(TimingVerdict v);

// One figure's decision at one look.
struct FigureDecision {
  std::string figure;
  bool lower_is_better = true;
  PairedEstimate estimate;
  double min_effect = 0.05;            // relative worsening worth failing
  std::string effect_note;             // FigureInput::effect_note
  double alpha_regression = kNoValue;  // the look's one-sided levels (LookSchedule)
  double alpha_no_regression = kNoValue;
  double p_regression = kNoValue;  // one-sided p of "not worse than the regression bound"
  double p_holm = kNoValue;        // the same, Holm-adjusted across the family: "regression" below alpha_regression
  double upper_log = kNoValue;     // theta + t(1 - alpha_no_regression) se: "no regression" below log(1 + min_effect)
  TimingVerdict verdict = TimingVerdict::unresolved;
  std::string why;  // one plain sentence
  // Unresolved: the scheduled look at which, if the estimate and its block spread stayed as they
  // are, a decision would come; empty where none up to the schedule's end would. Said in the report,
  // never used to stop (docs/gate-design.md).
  std::optional<int> likely_blocks;
};

struct FigureInput {
  std::string figure;
  bool lower_is_better = true;
  double min_effect = 0.05;
  std::vector<PairedUnit> units;
  std::string effect_note;  // how min_effect came about (a floor in force), for the decision line
};

// Every figure of one family decided at one look of `schedule` (at its level; Holm across the family
// for "regression"). A faster B is "no regression"
// once the upper bound is below the minimum effect; "no regression" is said first where both hold
// (the change lies between the regression bound and the minimum effect: either answer is right).
std::vector<FigureDecision> decide_figures(const std::vector<FigureInput>& figures, const LookSchedule& schedule);

// The figure's decision in one line, arm B named `b_name`: "ttft_ms: regression: candidate worse by
// +6.1% (95% CI +4.0% .. +8.3%), Holm p 0.0004, 8 blocks, minimum effect 5%; ...".
std::string decision_line(const FigureDecision& d, const std::string& b_name = "B");

}  // namespace fp
