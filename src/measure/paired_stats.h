// Paired, blocked statistics for two arms measured side by side (the old and the new build, or the
// flag off and on): the side-by-side gate's arithmetic, free of any runtime.
//
// The design it assumes (flow/paired/paired_runner.h): blocks, each one fresh launch of arm A and one of
// arm B, in pairs AB BA or BA AB at random (balanced: as many blocks with A first as with B first, per
// pair; paired_runner.h block_orders); in every launch the same
// prompts in the same order. The unit is one launch x one prompt (the median of that prompt's
// repetitions in that launch), or one launch for a per-launch figure; requests or tokens are never
// pooled across launches.
//
// Per figure:
//  1. per block and prompt, the paired log-ratio r = log(B / A), signed so that r > 0 means B is
//     worse (for a higher-is-better figure r = log(A / B));
//  2. per block, d = the mean of r over the prompts (prompts of one block share its two launches,
//     so they are not independent: the block is the independent unit);
//  3. d_k = theta + gamma * s_k + e_k, where s_k = +1 when A ran first in block k and -1 otherwise:
//     gamma absorbs a position effect (the second launch of a block systematically faster or
//     slower), which the balanced order evens out. It is fitted only where the degrees of freedom left
//     stay at least 4 (from eight blocks on with the default trimming): with 2 a variance estimate
//     can come out tiny by chance (an A/A CTest run read +4.0%, p 0.004 that way);
//  4. theta is the 20%-trimmed mean of the position-adjusted block values, with Yuen's interval
//     (winsorized variance, h - 1 degrees of freedom for h blocks kept, one fewer with the position
//     term). Why trimmed: a launch in a burst of the whole machine (here one launch in 16 ran 15%
//     slow, on the H200 one in five 10-40%) moves its block's value by the burst's size in either
//     direction; the plain mean and standard deviation let one such block widen the interval until
//     nothing resolves. The trimmed mean drops the g = floor(0.2 n) lowest and highest block values
//     (none at four blocks, one at six to nine, two at ten to fourteen ...), keeps about 94% of the
//     mean's efficiency on normal data, and Yuen's t is the standard interval for it (Wilcox,
//     Introduction to Robust Estimation and Hypothesis Testing, ch. 4). A rank method (Hodges-Lehmann
//     with the signed-rank interval) cannot decide at all before 8 blocks at the 0.5% per look the
//     sequential boundary needs (its smallest one-sided p at n blocks is 2^-n), and Huber's
//     M-estimate has no small-sample interval of known coverage; the simulations in
//     paired_stats_test.cpp check the whole sequential procedure with bursts. But a "regression"
//     also needs the signed-rank test of every block value, at a looser level (decide_figures): with
//     few blocks the trimmed values can cluster by chance, and Yuen's interval then trusts them;
//  5. a floor under Yuen's standard error where blocks carry two prompts or more: a block value is
//     a launch pair's effect plus the mean of its prompts' own noise, so its spread is at least the
//     prompts' spread within blocks over sqrt(prompts). That spread comes from every block's
//     prompts (2 degrees of freedom a block with 3 prompts, against Yuen's one a block less those
//     trimmed), robustly: per block the variance of its prompts about the block mean less each
//     prompt's typical offset (a real change may hit prompts unequally), then the median over the
//     blocks. With few blocks the trimmed values can agree by luck: on identical builds of
//     cases/generic-openai-llama-server.json (a bimodal TTFT) Yuen's interval then called 0.33% of
//     resampled trials a regression, 0.07% with the floor and the signed-rank confirmation
//     (paired_stats_test.cpp); on cases/chat-tiny-short.json the floor matched the blocks' own
//     spread (ratio 0.98 over 10 recorded trials), so it costs a decision only the luck it had;
//  6. the one-sided p-value of "B is not worse" (theta <= 0) from the same t.
// The machine's speed as a covariate (before step 3): where every launch carries a machine-speed
// reference timed beside it (the throughput reference, measure/throughput_reference.h, timed before,
// between and after its requests), x_k = log(machine B / machine A) says how much slower the machine
// itself was during B's launch of block k. The block values become d_k - beta x_k, beta the
// Theil-Sen slope of d on x (the median of the pairwise slopes between blocks of the same order, so
// that the position term does not enter it; at least 0: a slower machine never makes a build
// faster), and one more degree of freedom comes off. This is the analysis of covariance (CUPED, in
// online experiments): x does not depend on which build ran (the reference runs while the runtime
// idles), so theta keeps its meaning ("worse on a machine equally fast in both launches") and only
// the spread the machine caused leaves the blocks. Measured on cases/completion-realistic-long.json
// (bench/README.md section 3): the launches' decode speed moves 10-25% from one launch to the next
// with the machine (r 0.74 with the reference). Not fitted where a launch lacks the reference, where
// it would leave fewer than 4 degrees of freedom, or where the reference itself differs between the
// arms (its trimmed mean, two-sided p below kMachineArmP: a build whose idle runtime still takes CPU
// time would slow the reference, and adjusting would hide part of its cost); the estimate says which.
// A block whose adjusted value lies far from the others (Iglewicz and Hoaglin's modified z-score
// above 3.5) is flagged as a likely burst, with its values, whether or not it was trimmed.
// Holm's step-down correction across the gated figures of a case controls the family-wise rate of
// false "regression" calls. Distributions come from Boost.Math.
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
// The machine term is left out where the reference differs between the arms at this two-sided p.
// Strict because it is tested at every look: at 1% an identical-builds trial of the completion case
// tripped it at its 17th look (p 0.0074) and lost the term.
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
  // nearer): what the give-up rule uses (beyond_budget). A point estimate from a dozen noisy blocks
  // sitting near the minimum effect forecasts hundreds of blocks though identical builds are within
  // a standard error of it; deciding to stop on that gave up 3 of 10 identical-build trials of
  // cases/batch-tiny.json after 12 blocks (bench/README.md section 3).
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
// understates the blocks' own (identical builds of the generic case: +37% with Yuen's p 0.001 and
// signed-rank p 0.2, bench/README.md section 3).
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
// chosen from the simulations of the measured noise and bursts so that identical builds decide
// within it in at least 95% of trials on the noisiest shipped case: cases/chat-tiny-short.json
// (TTFT about 8 ms, block spread about 12%, judged at its 1 ms floor: 12.3%) decides in 89% within
// 24 blocks, 94% within 32 and 96% within 40; the completion case needs 20 for 95% of its +5% trials.
inline constexpr int kDefaultBudgetBlocks = 40;
// ... but never less than this many seconds (PairedPlan::budget_floor_s): a case whose blocks take
// a second (cases/batch-tiny.json: 1.2 s, a block spread of 5-10% in calm spells and 12-22% in noisy
// ones on this 2-core VM) needs 100 blocks or more in a noisy spell. Simulated with that noise
// (paired_stats_test.cpp): identical builds "no regression" in 71% within 40 blocks, 91% within 100
// (120 s), 96.5% within 150 (180 s). Three minutes cost such a case little and a 34 s-block case
// nothing (its 40 blocks are 23 minutes).
inline constexpr double kDefaultBudgetFloorS = 180;
inline constexpr double kGiveUpFactor = 2.0;
bool beyond_budget(const std::vector<FigureDecision>& decisions, int blocks, int affordable,
                   int from_blocks = kGiveUpFromBlocks, double factor = kGiveUpFactor);

// The figure's decision in one line, arm B named `b_name`: "ttft_ms: regression: candidate worse by
// +6.1% (95% CI +4.0% .. +8.3%), Holm p 0.0004, 8 blocks, minimum effect 5%; ...".
std::string decision_line(const FigureDecision& d, const std::string& b_name = "B");

}  // namespace fp
