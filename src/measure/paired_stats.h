// Paired, blocked statistics for two arms measured side by side (the old and the new build, or the
// flag off and on): the side-by-side gate's arithmetic, free of any runtime. Where each constant's
// value comes from (trials, simulations, machines): bench/calibration.md.
//
// The design it assumes (flow/paired/paired_runner.h): blocks, each one fresh launch of arm A and one
// of arm B, in a balanced random order (paired_runner.h block_orders); the same prompts in the same
// order in every launch. The unit is one launch x one prompt (the median of that prompt's repetitions
// in that launch), or one launch for a per-launch figure; nothing is pooled across launches.
//
// Per figure:
//  1. per block and prompt, the paired log-ratio r = log(B / A), signed so that r > 0 means B is worse;
//  2. per block, d = the mean of r over the prompts: the block is the independent unit;
//  3. d_k = theta + gamma * s_k + e_k, s_k = +1 when A ran first in block k, else -1: gamma absorbs a
//     position effect; fitted only where at least 4 degrees of freedom stay;
//  4. theta is the 20%-trimmed mean of the position-adjusted block values, with Yuen's interval
//     (winsorized variance; h - 1 degrees of freedom for h blocks kept, one fewer per fitted term):
//     a launch in a burst of the whole machine moves one block's value, and the trimmed mean keeps it
//     from widening the interval (Wilcox, Introduction to Robust Estimation and Hypothesis Testing,
//     ch. 4). A "regression" also needs the signed-rank test of every block value (decide_figures);
//  5. with two prompts or more per block, a floor under Yuen's standard error from the prompts'
//     spread within blocks (per block, the prompts' variance about the block mean less each prompt's
//     typical offset; the median over blocks; over sqrt(prompts));
//  6. the one-sided p-value of "B is not worse" (theta <= 0) from the same t.
// The machine's speed as a covariate (before step 3): where every launch carries a machine-speed
// reference (measure/throughput_reference.h), x_k = log(machine B / machine A), and the block values
// become d_k - beta x_k, beta the Theil-Sen slope of d on x over blocks of the same order, at least 0
// (the analysis of covariance, CUPED). Not fitted where a launch lacks the reference, where fewer than
// 4 degrees of freedom would stay, or where the reference itself differs between the arms (two-sided
// p below kMachineArmP); the estimate says which.
// A block whose adjusted value has a modified z-score (Iglewicz and Hoaglin) above kBurstZ is flagged
// as a likely burst. Holm's step-down correction across a case's gated figures controls the
// family-wise rate of false "regression" calls. Distributions come from Boost.Math.
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
  // The machine-speed reference beside each launch (ms, higher is slower); kNoValue: none.
  double machine_a = kNoValue, machine_b = kNoValue;
};

// The fraction of block values trimmed from each end (see the file comment).
inline constexpr double kBlockTrim = 0.2;
// Modified z-score (0.6745 (x - median) / MAD) above which a block value is flagged as a burst.
inline constexpr double kBurstZ = 3.5;
// A "regression" must be shown worse than this share of the minimum effect (decide_figures).
inline constexpr double kRegressionShare = 0.6;
// The machine term is left out where the reference differs between the arms at this two-sided p;
// strict because it is tested at every look (bench/calibration.md).
inline constexpr double kMachineArmP = 0.001;

// One block's value of a figure, as the estimate used it.
struct BlockValue {
  int block = 0;                // 0-based block index
  bool a_first = true;
  double d = kNoValue;          // mean log-ratio over the block's prompts, > 0 means B worse
  double adjusted = kNoValue;   // d less the machine and position terms (d itself where none was fitted)
  double machine = kNoValue;    // x: log(machine B / machine A), > 0 means B's launch had the slower machine
  double a = kNoValue;          // geometric mean of arm A's unit values over the block's prompts
  double b = kNoValue;          // the same for arm B
  bool trimmed = false;         // left out of the trimmed mean
  bool burst = false;           // looks like a burst: modified z-score above kBurstZ
};

struct PairedEstimate {
  size_t blocks = 0;       // blocks with at least one usable unit
  size_t units = 0;        // usable units (finite, positive a and b)
  double worse_log = kNoValue;  // theta: estimated log(B/A), > 0 means B is worse
  double low_log = kNoValue;    // interval for theta at the requested confidence
  double high_log = kNoValue;
  double se_log = kNoValue;     // standard error of theta
  // The spread of one block's value that the interval implies: se_log * sqrt(blocks) (for the
  // trimmed mean, the winsorized standard deviation over (1 - 2 * trim)). What sizes the blocks a
  // decision needs.
  double block_sd_log = kNoValue;
  // The block spread a forecast of the blocks still needed uses: the smaller of block_sd_log and
  // the MAD-based spread of the adjusted block values (scaled to a standard deviation), which a
  // burst or two among few blocks does not inflate. Only the forecast uses it, never a decision.
  double forecast_sd_log = kNoValue;
  // The least spread of one block's value that the prompts' spread within blocks implies (per block
  // the prompts' variance about the block mean less each prompt's typical offset, the median over
  // blocks, over the prompts per block), and the standard error it floors se_log at; kNoValue with
  // one prompt per block.
  double within_sd_log = kNoValue;
  double se_floor_log = kNoValue;
  int df = 0;
  double p_worse = kNoValue;    // one-sided p of H0: theta <= 0 (B not worse)
  bool order_term = false;      // the position term was fitted
  double order_log = kNoValue;  // gamma: how much worse the second launch of a block ran (log)
  bool machine_term = false;       // the machine-speed covariate was fitted
  double machine_slope = kNoValue;  // beta: log-change of the figure per log-change of the machine
  std::string machine_note;         // why it was not fitted, where every launch had a reference
  int trimmed_each_end = 0;     // g: block values dropped from each end
  std::vector<BlockValue> block_values;  // in block order
  std::vector<BlockValue> bursts() const;  // the flagged ones
  // Relative forms, exp(x) - 1: +0.05 means B is 5% worse.
  double worse_rel() const;
  double low_rel() const;
  double high_rel() const;
};

// The estimate for one figure. Units with a non-finite or non-positive value are ignored. `trim` is
// the fraction trimmed from each end (0: the plain mean and the least-squares position term).
// `within_floor`: floor the standard error by the prompts' spread within blocks (the default).
PairedEstimate estimate_paired(const std::vector<PairedUnit>& units, bool lower_is_better, double confidence = 0.95,
                               double trim = kBlockTrim, bool within_floor = true);

// The degrees of freedom of the estimate at n blocks (a balanced order): n - 2 floor(trim n) - 1, one
// fewer where the position term is fitted and one fewer again for the machine term (each only where
// at least 4 remain after it); 0 below two blocks.
int paired_df(int blocks, double trim = kBlockTrim, bool machine = false);

// Student's t distribution (Boost.Math): CDF and quantile (df > 0); NaN outside the domain.
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
  std::string effect_note;       // FigureInput::effect_note
  double p_regression = kNoValue;  // one-sided p of "not worse than the regression bound"
  double p_holm = kNoValue;      // the same, Holm-adjusted across the gated figures
  // Wilcoxon's exact one-sided signed-rank p of the (adjusted, untrimmed) block values against the
  // regression bound (measure/signed_rank.h): the confirmation a "regression" also needs.
  double p_rank = kNoValue;
  TimingVerdict verdict = TimingVerdict::unresolved;
  std::string why;               // one plain sentence
  std::optional<int> more_blocks;  // unresolved: blocks more that would likely settle it
  // Blocks in all that a decision likely needs at the spread seen so far (the blocks so far when
  // decided); empty when no number of blocks would settle it at this estimate.
  std::optional<int> likely_blocks;
  // The same forecast with the change one standard error nearer to a decision (whichever side is
  // nearer): what the give-up rule uses (beyond_budget), since a point estimate near the minimum
  // effect forecasts far more blocks than identical builds need (bench/calibration.md).
  std::optional<int> hopeful_blocks;
};

// Blocks in all (even, more than the estimate's) after which the decision bound would likely settle
// the figure either way, if the estimate and its block spread stay as they are; empty when none up
// to `limit` would.
std::optional<int> blocks_to_decide(const PairedEstimate& e, double min_effect, double alpha_look,
                                    double trim = kBlockTrim, double regression_share = kRegressionShare,
                                    int limit = 1000);

// The gate looks at the data again after every pair of blocks, and every look is a chance to decide
// wrongly: at a one-sided 2.5% per look, 10 looks call identical builds a regression far more often
// than 2.5%. So each look decides at alpha_look = 0.5% one-sided (a Pocock-style constant boundary:
// about 2.5% overall for up to ~20 looks), for both outcomes. The unit tests simulate the whole
// sequential procedure and check the overall rates.
// "Regression" also needs the block values' signed ranks against the regression bound at this
// one-sided level (Wilcoxon, exact: measure/signed_rank.h). 1/16 is what four blocks, every one
// beyond the bound, give: the first look can still decide. Requiring a second test can only remove
// "regression" calls, so the sequential error control of the trimmed mean's test holds as it was;
// what it removes is a call carried by a few clustered central blocks whose winsorized spread
// understates the blocks' own (bench/calibration.md).
inline constexpr double kRankConfirmAlpha = 1.0 / 16;
struct DecisionOptions {
  double alpha_look = 0.005;  // one-sided level of each look, for "regression" (after Holm) and "no regression"
  double confidence = 0.95;   // the interval reported with the estimate
  int min_blocks = 4;         // fewer blocks: always unresolved
  double trim = kBlockTrim;   // block values trimmed from each end
  double regression_share = kRegressionShare;  // the regression bound, as a share of the minimum effect
  double rank_alpha = kRankConfirmAlpha;       // the signed-rank confirmation's level (1: none)
  bool within_floor = true;                    // the within-block floor under the standard error
};

// The three-way decision per figure, with d = log(1 + min_effect), the regression bound
// r = log(1 + regression_share * min_effect) and the decision bound upper = theta + t(1 - alpha_look, df) * se:
//   no regression  upper < d (any change is smaller than the minimum effect; a faster B is always
//                  this once resolved);
//   regression     B is worse than r: the Holm-adjusted one-sided p of theta <= r is below
//                  alpha_look, and the block values' signed-rank p against r is at most rank_alpha
//                  (kRankConfirmAlpha). So a true change below 60% of the minimum effect (3% at the
//                  default 5%) is called a regression no more often than identical builds are, and
//                  one at the minimum effect or above is never "no regression"; between the two,
//                  either answer is right;
//   unresolved     neither: more blocks are needed.
struct FigureInput {
  std::string figure;
  bool lower_is_better = true;
  double min_effect = 0.05;
  std::vector<PairedUnit> units;
  std::string effect_note;  // how min_effect came about (a floor in force), for the decision line
};
std::vector<FigureDecision> decide_figures(const std::vector<FigureInput>& figures, const DecisionOptions& options = {});

// Blocks in all that every unresolved figure likely needs (the largest of their likely_blocks);
// 0 when none is unresolved; empty when some figure has none (no number of blocks would settle it
// at its estimate).
std::optional<int> likely_blocks(const std::vector<FigureDecision>& decisions);

// When the gate looks (decides): after `first` blocks, after every further pair up to
// kDenseLooksUpTo blocks, then each time the blocks have grown by a fifth (even): 40, 48, 58, 70, 84,
// 102, ... Every look spends some of the error rate (DecisionOptions::alpha_look), so the looks past
// the blocks the per-look level was sized for (about 20) thin out; the budget floor
// (kDefaultBudgetFloorS) gives a 1.2 s-block case 150 blocks and 7 more looks, not 55.
inline constexpr int kDenseLooksUpTo = 40;
int next_look(int blocks, int first);

// Blocks in all that every unresolved figure would need at one standard error's luck (the largest
// of their hopeful_blocks); 0 when none is unresolved; empty when some figure has none.
std::optional<int> hopeful_blocks(const std::vector<FigureDecision>& decisions);

// Whether the gate should stop before its budget is spent: from kGiveUpFromBlocks blocks on, some
// unresolved figure would need more than kGiveUpFactor times the blocks the budget allows
// (`affordable`, in all) even with the change one standard error nearer to a decision
// (hopeful_blocks). The forecast's spread is burst-proof (forecast_sd_log) and the factor leaves
// room for a spread estimated from few blocks. Simulated with this machine's bursts and noisy
// spells (paired_stats_test.cpp): it stops where no budget would do, and costs identical builds
// almost none of their "no regression" outcomes.
inline constexpr int kGiveUpFromBlocks = 12;
// The side-by-side gate's default budget in blocks (flow/paired/paired_runner.h PairedPlan::budget_blocks),
// chosen from simulations of the measured noise and bursts so that identical builds decide within it
// in at least 95% of trials on the noisiest shipped case (bench/calibration.md).
inline constexpr int kDefaultBudgetBlocks = 40;
// ... but never less than this many seconds (PairedPlan::budget_floor_s): a case whose blocks take
// about a second needs 100 blocks or more in a noisy spell (bench/calibration.md).
inline constexpr double kDefaultBudgetFloorS = 180;
inline constexpr double kGiveUpFactor = 2.0;
bool beyond_budget(const std::vector<FigureDecision>& decisions, int blocks, int affordable,
                   int from_blocks = kGiveUpFromBlocks, double factor = kGiveUpFactor);

// The figure's decision in one line, arm B named `b_name`: "ttft_ms: regression: candidate worse by
// +6.1% (95% CI +4.0% .. +8.3%), Holm p 0.0004, 8 blocks, minimum effect 5%; ...".
std::string decision_line(const FigureDecision& d, const std::string& b_name = "B");

}  // namespace fp
