#include "measure/paired_stats.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

namespace fp {
namespace {

TEST(StudentT, QuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302653, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228139, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.5, 7), 0.0, 1e-6);
  EXPECT_NEAR(student_t_cdf(2.228139, 10), 0.975, 1e-6);
  EXPECT_NEAR(student_t_cdf(-1.0, 1), 0.25, 1e-9);  // Cauchy
}

TEST(Holm, AdjustsStepDown) {
  // m = 3: sorted 0.01, 0.02, 0.04 -> 0.03, 0.04, 0.04 (monotone).
  auto a = holm_adjust({0.04, 0.01, 0.02});
  EXPECT_NEAR(a[1], 0.03, 1e-12);
  EXPECT_NEAR(a[2], 0.04, 1e-12);
  EXPECT_NEAR(a[0], 0.04, 1e-12);
  auto b = holm_adjust({0.5, kNoValue});
  EXPECT_NEAR(b[0], 0.5, 1e-12);
  EXPECT_TRUE(std::isnan(b[1]));
}

std::vector<PairedUnit> exact_units(int blocks, double ratio) {
  std::vector<PairedUnit> u;
  for (int k = 0; k < blocks; ++k)
    for (const char* p : {"p1", "p2", "p3"}) u.push_back({k, k % 2 == 0, p, 100.0, 100.0 * ratio});
  return u;
}

TEST(PairedEstimate, ExactRatioAndDirection) {
  PairedEstimate e = estimate_paired(exact_units(4, 1.05), true);
  EXPECT_EQ(e.blocks, 4u);
  EXPECT_EQ(e.units, 12u);
  EXPECT_NEAR(e.worse_rel(), 0.05, 1e-12);
  EXPECT_NEAR(e.low_rel(), 0.05, 1e-12);
  EXPECT_EQ(e.p_worse, 0.0);
  // Throughput 5% higher in B is better: worse by -4.76%.
  PairedEstimate h = estimate_paired(exact_units(4, 1.05), false);
  EXPECT_NEAR(h.worse_rel(), 1 / 1.05 - 1, 1e-12);
}

TEST(PairedEstimate, IgnoresUnusableUnitsAndNeedsTwoBlocks) {
  std::vector<PairedUnit> u = {{0, true, "p", 100, 110}, {0, true, "q", kNoValue, 1}, {0, true, "r", 0, 5}};
  PairedEstimate e = estimate_paired(u, true);
  EXPECT_EQ(e.units, 1u);
  EXPECT_EQ(e.blocks, 1u);
  EXPECT_TRUE(std::isnan(e.se_log));
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}});
  EXPECT_EQ(d[0].verdict, TimingVerdict::unresolved);
}

// gate:same-build in a fresh clone (2026-12-01): the same build on both sides, TTFT per launch and
// prompt over four blocks, the candidate 1.5-6% slower in each block and the second launch ~2%
// slower. With a position term at four blocks (2 degrees of freedom) this read "regression" +4.0%,
// p 0.004; four blocks are too few to tell that from chance, so it must stay open.
TEST(PairedEstimate, FourSameSignBlocksAreNotARegression) {
  const double base[4][3] = {{938.6, 809.1, 743.6}, {941.8, 814.7, 744.6}, {972.2, 833.9, 764.2}, {961.3, 825.5, 747.7}};
  const double cand[4][3] = {{962.7, 879.6, 810.6}, {953.3, 834.4, 745.8}, {1022.7, 829.6, 866.1}, {1008.7, 819.1, 772.1}};
  std::vector<PairedUnit> u;
  for (int k = 0; k < 4; ++k)
    for (int p = 0; p < 3; ++p) u.push_back({k, k % 2 == 0, "p" + std::to_string(p), base[k][p], cand[k][p]});
  PairedEstimate e = estimate_paired(u, true);
  EXPECT_FALSE(e.order_term);
  EXPECT_EQ(e.df, 3);
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}});
  EXPECT_EQ(d[0].verdict, TimingVerdict::unresolved) << decision_line(d[0]);
}

TEST(PairedEstimate, PositionEffectIsAbsorbed) {
  // The second launch of every block is 3% slower; A and B are the same build.
  std::vector<PairedUnit> u;
  for (int k = 0; k < 8; ++k) {
    const bool a_first = k % 2 == 0;
    const double jitter = 1 + 0.001 * ((k * 7) % 5);
    u.push_back({k, a_first, "p", 100 * (a_first ? 1.0 : 1.03) * jitter, 100 * (a_first ? 1.03 : 1.0) * jitter});
  }
  PairedEstimate e = estimate_paired(u, true);
  EXPECT_TRUE(e.order_term);
  EXPECT_NEAR(e.worse_log, 0.0, 1e-12);
  EXPECT_NEAR(e.order_log, std::log(1.03), 1e-12);
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}});
  EXPECT_EQ(d[0].verdict, TimingVerdict::no_regression) << decision_line(d[0]);
}

// The machine term: every block's value is 2% (B worse) plus 1.5 times the machine's slowdown in
// B's launch, as the reference saw it; the term takes the machine's part out exactly and the slope
// is the Theil-Sen one. Identical builds on the same machine: no regression, where without the
// reference the block spread (about 9%) keeps the figure unresolved.
TEST(PairedEstimate, MachineTermTakesOutWhatTheReferenceSaw) {
  const double x[] = {0.06, -0.04, 0.10, -0.08, 0.02, 0.05, -0.07, 0.09, -0.03, -0.10, 0.04, -0.05};
  std::vector<PairedUnit> u, plain;
  for (int k = 0; k < 12; ++k) {
    const bool a_first = k % 2 == 0;
    const double d = 0.02 + 1.5 * x[k] + 0.001 * ((k * 5) % 3);
    u.push_back({k, a_first, "", 100, 100 * std::exp(d), 5.0, 5.0 * std::exp(x[k])});
    plain.push_back({k, a_first, "", 100, 100 * std::exp(d)});
  }
  PairedEstimate e = estimate_paired(u, true);
  ASSERT_TRUE(e.machine_term) << e.machine_note;
  EXPECT_NEAR(e.machine_slope, 1.5, 0.05);
  EXPECT_NEAR(e.worse_log, 0.021, 0.002);
  EXPECT_LT(e.block_sd_log, 0.01);
  EXPECT_NEAR(e.block_values[2].machine, 0.10, 1e-12);
  EXPECT_NEAR(e.block_values[2].adjusted, e.block_values[2].d - e.machine_slope * 0.10 - (e.order_term ? e.order_log : 0), 1e-12);
  EXPECT_EQ(e.df, paired_df(12, kBlockTrim, true));
  EXPECT_EQ(paired_df(12, kBlockTrim, true), paired_df(12) - 1);
  EXPECT_GT(estimate_paired(plain, true).block_sd_log, 0.08);
  auto d = decide_figures({{"itl_ms", true, 0.05, u}});
  EXPECT_EQ(d[0].verdict, TimingVerdict::no_regression) << decision_line(d[0]);
  EXPECT_NE(decision_line(d[0]).find("(machine term: the machine reference's change x "), std::string::npos)
      << decision_line(d[0]);
  EXPECT_EQ(decide_figures({{"itl_ms", true, 0.05, plain}})[0].verdict, TimingVerdict::unresolved);
}

// The machine term is left out where it cannot be trusted: the reference slower in every one of B's
// launches (a build whose idle runtime still takes CPU time), a launch without a reference, too few
// blocks; and its slope is never negative.
TEST(PairedEstimate, MachineTermOnlyWhereItCanBeTrusted) {
  std::vector<PairedUnit> arm_differs, one_missing, noise;
  for (int k = 0; k < 12; ++k) {
    const bool a_first = k % 2 == 0;
    const double x = 0.05 + 0.01 * ((k * 7) % 4);
    arm_differs.push_back({k, a_first, "", 100, 100 * std::exp(1.5 * x), 5.0, 5.0 * std::exp(x)});
    one_missing.push_back({k, a_first, "", 100, 100 * std::exp(0.01 * (k % 3)), 5.0, k == 3 ? kNoValue : 5.0 * std::exp(0.01 * (k % 5))});
    // The figure falls where the reference rose: a negative slope, clamped at 0.
    const double y = 0.02 * ((k * 3) % 5) - 0.04;
    noise.push_back({k, a_first, "", 100, 100 * std::exp(-y), 5.0, 5.0 * std::exp(y)});
  }
  PairedEstimate e = estimate_paired(arm_differs, true);
  EXPECT_FALSE(e.machine_term);
  EXPECT_NE(e.machine_note.find("differs between the arms"), std::string::npos) << e.machine_note;
  EXPECT_NEAR(e.worse_log, std::log(std::exp(1.5 * 0.065)), 0.02);  // the whole slowdown stays in
  EXPECT_FALSE(estimate_paired(one_missing, true).machine_term);
  EXPECT_TRUE(estimate_paired(one_missing, true).machine_note.empty());
  std::vector<PairedUnit> six(noise.begin(), noise.begin() + 6);
  EXPECT_FALSE(estimate_paired(six, true).machine_term);  // 2 degrees of freedom would be left
  PairedEstimate n = estimate_paired(noise, true);
  ASSERT_TRUE(n.machine_term);
  EXPECT_EQ(n.machine_slope, 0.0);
}

// Yuen's trimmed mean and its standard error, against the definition worked by hand (n = 10, g = 2:
// the kept values -0.01 .. 0.02 average 0.0075; winsorized at -0.005 and 0.02, SS_w / (h (h - 1))
// gives se 0.0059512, df 5). All blocks in one order, so no position term.
TEST(PairedEstimate, TrimmedMeanAndYuenStandardError) {
  const double x[] = {0.01, -0.02, 0.03, 0.00, 0.015, -0.005, 0.2, -0.01, 0.005, 0.02};
  std::vector<PairedUnit> u;
  for (int k = 0; k < 10; ++k) u.push_back({k, true, "p", 100, 100 * std::exp(x[k])});
  PairedEstimate e = estimate_paired(u, true);
  EXPECT_FALSE(e.order_term);
  EXPECT_EQ(e.trimmed_each_end, 2);
  EXPECT_EQ(e.df, 5);
  EXPECT_NEAR(e.worse_log, 0.0075, 1e-12);
  EXPECT_NEAR(e.se_log, 0.005951190357119042, 1e-12);
  EXPECT_NEAR(e.p_worse, 1 - student_t_cdf(0.0075 / 0.005951190357119042, 5), 1e-12);
  // The 0.2 block is trimmed and flagged as a burst; -0.02 is trimmed but is not one.
  ASSERT_EQ(e.bursts().size(), 1u);
  EXPECT_EQ(e.bursts()[0].block, 6);
  EXPECT_TRUE(e.block_values[1].trimmed);
  EXPECT_FALSE(e.block_values[1].burst);
  // Without trimming: the plain mean and the t standard error.
  PairedEstimate plain = estimate_paired(u, true, 0.95, 0.0);
  EXPECT_EQ(plain.trimmed_each_end, 0);
  EXPECT_NEAR(plain.worse_log, 0.0245, 1e-12);
  EXPECT_EQ(plain.df, 9);
}

// The run (cases/completion-realistic-long.json, identical builds, 2026-12-01): seven blocks
// within +-1.5% and block 2 at -15.0%, a launch of the whole machine in a burst. The plain mean left
// TTFT unresolved after 8 blocks; the trimmed mean drops the burst and decides, and names it.
TEST(PairedEstimate, OneBurstBlockNeitherDecidesNorBlocks) {
  const double d[] = {0.012, -0.150, -0.008, 0.004, 0.013, -0.011, 0.006, -0.003};
  std::vector<PairedUnit> u;
  for (int k = 0; k < 8; ++k) u.push_back({k, k % 2 == 0, "p", 1000, 1000 * std::exp(d[k])});
  auto robust = decide_figures({{"ttft_ms", true, 0.05, u}});
  EXPECT_EQ(robust[0].verdict, TimingVerdict::no_regression) << decision_line(robust[0]);
  const auto bursts = robust[0].estimate.bursts();
  ASSERT_EQ(bursts.size(), 1u);
  EXPECT_EQ(bursts[0].block, 1);
  EXPECT_NEAR(bursts[0].d, -0.150, 1e-12);
  EXPECT_NEAR(bursts[0].b / bursts[0].a, std::exp(-0.150), 1e-12);
  EXPECT_TRUE(bursts[0].trimmed);
  DecisionOptions plain;
  plain.trim = 0;
  EXPECT_EQ(decide_figures({{"ttft_ms", true, 0.05, u}}, plain)[0].verdict, TimingVerdict::unresolved);
  // Mirrored (the burst in the baseline's launch of a block whose others lean worse) it cannot
  // make a regression either.
  for (auto& x : u) std::swap(x.a, x.b);
  EXPECT_NE(decide_figures({{"ttft_ms", true, 0.05, u}})[0].verdict, TimingVerdict::regression);
}

// Blocks whose means agree closely while their prompts scatter widely: the block means agree by
// luck, and the standard error is floored at what the prompts' spread within blocks implies.
TEST(PairedEstimate, WithinBlockSpreadFloorsTheStandardError) {
  std::vector<PairedUnit> u;
  const double spread[] = {0.0, 0.4, 0.8};
  for (int k = 0; k < 6; ++k)
    for (int p = 0; p < 3; ++p)  // each prompt takes each offset twice: no prompt is typically worse
      u.push_back({k, k % 2 == 0, "p" + std::to_string(p), 100, 100 * std::exp(spread[(p + k) % 3] + 0.001 * k)});
  const PairedEstimate e = estimate_paired(u, true);
  // Per block the variance of (0, 0.4, 0.8) is 0.16; over the median of chi-square(2)/2 = ln 2 and 3 prompts.
  EXPECT_NEAR(e.within_sd_log, std::sqrt(0.16 / std::log(2.0) / 3), 1e-6);
  EXPECT_NEAR(e.se_log, e.within_sd_log / std::sqrt(6.0), 1e-9);
  EXPECT_NEAR(e.se_floor_log, e.se_log, 1e-12);
  const PairedEstimate lucky = estimate_paired(u, true, 0.95, kBlockTrim, false);
  EXPECT_LT(lucky.se_log, 0.01);
  DecisionOptions no_floor;
  no_floor.within_floor = false;
  EXPECT_EQ(decide_figures({{"ttft_ms", true, 0.289, u}}, no_floor)[0].verdict, TimingVerdict::regression);
  const auto d = decide_figures({{"ttft_ms", true, 0.289, u}});
  EXPECT_EQ(d[0].verdict, TimingVerdict::unresolved) << decision_line(d[0]);
  EXPECT_NE(decision_line(d[0]).find("standard error floored by the prompts' spread within blocks"), std::string::npos);
}

// The floor takes out what makes a prompt typically slower or faster (a real change may hit prompts
// unequally), and a burst that hit one request of one block does not raise it for every block.
TEST(PairedEstimate, WithinBlockFloorIgnoresPromptEffectsAndABurst) {
  std::vector<PairedUnit> u;
  for (int k = 0; k < 8; ++k)
    for (int p = 0; p < 3; ++p) {
      double r = 0.05 * (p + 1) + 0.004 * ((k * 7 + p * 3) % 5 - 2);
      if (k == 3 && p == 2) r += 0.7;  // the burst
      u.push_back({k, k % 2 == 0, "p" + std::to_string(p), 100, 100 * std::exp(r)});
    }
  const PairedEstimate e = estimate_paired(u, true);
  ASSERT_TRUE(std::isfinite(e.within_sd_log));
  EXPECT_LT(e.within_sd_log, 0.01);
  std::vector<PairedUnit> one_prompt;
  for (int k = 0; k < 8; ++k) one_prompt.push_back({k, k % 2 == 0, "", 100, 101});
  EXPECT_TRUE(std::isnan(estimate_paired(one_prompt, true).within_sd_log)) << "no floor from one unit per block";
}

// The identical-builds false alarm of cases/generic-openai-llama-server.json (bench/README.md section
// 3), as one value per block: the trimmed mean is beyond the 17.3% bound by Yuen's test, but two of
// the three largest departures are below it; the signed-rank confirmation keeps it unresolved.
TEST(Decision, RegressionNeedsTheSignedRanksToo) {
  std::vector<PairedUnit> u;
  const double pct[] = {48.6, 32.0, 25.8, 44.5, -24.9, 26.4, 74.4, -48.0, 49.6, 39.1};
  const bool baseline_first[] = {true, false, false, true, true, false, false, true, true, false};
  for (int k = 0; k < 10; ++k) u.push_back({k, baseline_first[k], "", 100, 100 * (1 + pct[k] / 100)});
  DecisionOptions yuen_only;
  yuen_only.rank_alpha = 1;
  const auto before = decide_figures({{"ttft_ms", true, 0.289, u}}, yuen_only);
  ASSERT_EQ(before[0].verdict, TimingVerdict::regression) << decision_line(before[0]);
  const auto d = decide_figures({{"ttft_ms", true, 0.289, u}});
  EXPECT_EQ(d[0].verdict, TimingVerdict::unresolved) << decision_line(d[0]);
  EXPECT_GT(d[0].p_rank, 0.15);
  EXPECT_NE(d[0].why.find("signed ranks are not convincing"), std::string::npos) << d[0].why;
  std::printf("  %s\n", decision_line(d[0]).c_str());
  // Four blocks, every one well beyond the bound: the first look still decides.
  std::vector<PairedUnit> four;
  for (int k = 0; k < 4; ++k) four.push_back({k, k % 2 == 0, "", 100, 150.0 + k});
  const auto caught = decide_figures({{"ttft_ms", true, 0.05, four}});
  EXPECT_EQ(caught[0].verdict, TimingVerdict::regression) << decision_line(caught[0]);
  EXPECT_DOUBLE_EQ(caught[0].p_rank, 1.0 / 16);
}

TEST(PairedEstimate, DegreesOfFreedomPerBlocks) {
  EXPECT_EQ(paired_df(4), 3);   // no trimming, no position term
  EXPECT_EQ(paired_df(6), 3);   // one trimmed each end, no position term (it would leave 2)
  EXPECT_EQ(paired_df(8), 4);   // one trimmed each end, position term
  EXPECT_EQ(paired_df(10), 4);  // two trimmed each end
  EXPECT_EQ(paired_df(6, 0.0), 4);
  EXPECT_EQ(paired_df(4, 0.0), 3);
}

// A true change below 60% of the minimum effect is not a regression, however clear.
TEST(Decision, SmallTrueChangeIsNotARegression) {
  std::vector<PairedUnit> u;
  for (int k = 0; k < 40; ++k) u.push_back({k, k % 2 == 0, "p", 100, 100 * 1.025 * std::exp(0.002 * ((k * 7) % 5 - 2))});
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}});
  EXPECT_EQ(d[0].verdict, TimingVerdict::no_regression) << decision_line(d[0]);
  EXPECT_LT(d[0].estimate.p_worse, 1e-6);  // clearly slower, but by less than the minimum effect
}

// A simulated machine: every launch has its own speed (log-normal, sd `launch_sd`), every request
// its own noise (`request_sd`), B is slower by `shift`. Three prompts, `rounds` repetitions each.
// A launch bursts with probability `burst_rate`: every request of it runs slower by a factor drawn
// uniformly from [1 + burst_lo, 1 + burst_hi] (the whole machine slow, as recorded).
// The machine term (paired_stats.h): where `machine_sd` > 0, each launch also has a share of its
// speed that the machine itself caused (log-normal, sd `machine_sd`), which the launch's reference
// sees: reference = exp(machine / slope + N(0, reference_sd)), so that the figure moves `slope`
// times as much as the reference does. `burst_seen` of the bursts are the machine's as well (the
// reference sees them); `with_reference` says whether the units carry the reference at all.
struct Machine {
  double launch_sd = 0.02, request_sd = 0.03, shift = 0.0;
  int rounds = 2;
  double burst_rate = 0, burst_lo = 0, burst_hi = 0;
  double trim = kBlockTrim;
  double machine_sd = 0, reference_sd = 0.02, slope = 1.5, burst_seen = 0;
  bool with_reference = false;
  int prompts = 3;
  // A noisy spell: with probability spell_rate a whole trial runs at launch sd spell_launch_sd.
  double spell_rate = 0, spell_launch_sd = 0;
};

// The bursts measured (2026-12-01): here, one launch in 16 ran 15% slow (the A/A run on
// cases/completion-realistic-long.json, 16 launches); on the H200, 71 of 376 launches (19%) were
// 10-40% slower than their arm's median (every gate.json under fixtures/logs/h200-live/gate).
Machine with_cpu_bursts(Machine m) {
  m.burst_rate = 1.0 / 16;
  m.burst_lo = 0.12;
  m.burst_hi = 0.18;
  return m;
}

// One launch: the prompts' medians over the rounds, each prompt's base value times the factor, and
// the launch's machine reference.
struct SimLaunch {
  std::vector<double> medians;
  double reference = kNoValue;
};
SimLaunch launch_medians(std::mt19937_64& rng, const Machine& m, const std::vector<double>& bases, double factor) {
  std::normal_distribution<double> launch(0, m.launch_sd), request(0, m.request_sd), machine(0, std::max(m.machine_sd, 1e-12)),
      reference(0, std::max(m.reference_sd, 1e-12));
  std::uniform_real_distribution<double> u01(0, 1), burst(m.burst_lo, m.burst_hi);
  double l = launch(rng);
  double seen = m.machine_sd > 0 ? machine(rng) : 0.0;
  if (m.burst_rate > 0 && u01(rng) < m.burst_rate) {
    const double b = std::log1p(burst(rng));
    if (m.burst_seen > 0 && u01(rng) < m.burst_seen) seen += b;
    else l += b;
  }
  SimLaunch out;
  if (m.with_reference) out.reference = 5.0 * std::exp(seen / m.slope + reference(rng));
  for (double base : bases) {
    std::vector<double> v;
    for (int r = 0; r < m.rounds; ++r) v.push_back(base * factor * std::exp(l + seen + request(rng)));
    out.medians.push_back(median(v));
  }
  return out;
}

// The gate's sequential procedure (flow/paired/paired_runner.cpp): first look after `first` blocks, then a
// look after every further pair, up to `max_blocks`; add_block(k, units) appends block k's units.
// The budget is `max_blocks` blocks; the gate stops early where beyond_budget says so.
TimingVerdict decide_sequentially(const std::function<void(int, std::vector<PairedUnit>&)>& add_block, double min_effect,
                                  int first, int max_blocks, double trim, int* blocks_used,
                                  const DecisionOptions& options = {}) {
  std::vector<PairedUnit> units;
  int look_at = first;
  for (int k = 0; k < max_blocks; ++k) {
    add_block(k, units);
    const int n = k + 1;
    if (n == look_at || n == max_blocks) {
      look_at = next_look(n, first);
      DecisionOptions o = options;
      o.min_blocks = first;
      o.trim = trim;
      auto d = decide_figures({{"ttft_ms", true, min_effect, units}}, o);
      if (d[0].verdict != TimingVerdict::unresolved || n == max_blocks || beyond_budget(d, n, max_blocks)) {
        if (blocks_used) *blocks_used = n;
        return d[0].verdict;
      }
    }
  }
  return TimingVerdict::unresolved;
}

// A simulated machine's blocks, decided as the gate does.
TimingVerdict sequential(std::mt19937_64& rng, const Machine& machine, double min_effect, int first, int max_blocks,
                         int* blocks_used = nullptr) {
  Machine m = machine;
  if (m.spell_rate > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < m.spell_rate) m.launch_sd = m.spell_launch_sd;
  const double bases[] = {800, 1200, 2000};
  const std::vector<double> b(bases, bases + m.prompts);
  auto add_block = [&](int k, std::vector<PairedUnit>& units) {
    const bool a_first = k % 2 == 0;
    // The launches of a block in their order (a burst is a launch's, not an arm's).
    const SimLaunch first_launch = launch_medians(rng, m, b, a_first ? 1.0 : 1.0 + m.shift);
    const SimLaunch second_launch = launch_medians(rng, m, b, a_first ? 1.0 + m.shift : 1.0);
    const SimLaunch& la = a_first ? first_launch : second_launch;
    const SimLaunch& lb = a_first ? second_launch : first_launch;
    for (int p = 0; p < m.prompts; ++p)
      units.push_back({k, a_first, "p" + std::to_string(p), la.medians[p], lb.medians[p], la.reference, lb.reference});
  };
  return decide_sequentially(add_block, min_effect, first, max_blocks, m.trim, blocks_used);
}

// The CUDA default's minimum effect for host-clock figures (flow/paired/paired_runner.h kHostClockOnGpuMinEffect).
constexpr double kH200HostMinEffect = 0.25;

struct Rates {
  double regression = 0, no_regression = 0, unresolved = 0, mean_blocks = 0;
};

Rates simulate(const Machine& m, double min_effect, int trials, uint64_t seed, int first = 4,
               int max_blocks = kDefaultBudgetBlocks) {
  std::mt19937_64 rng(seed);
  Rates r;
  struct Print {
    const Machine& m;
    double min_effect;
    Rates& r;
    ~Print() {
      char ref[160] = "";
      if (m.with_reference)
        std::snprintf(ref, sizeof ref, ", machine sd %.3f seen by the reference (noise %.3f, slope %.1f, bursts seen %.1f)", m.machine_sd,
                      m.reference_sd, m.slope, m.burst_seen);
      std::printf("  simulated: launch sd %.3f, request sd %.3f, bursts %.3f of launches +%.0f..%.0f%%, trim %.2f, shift %+.3f, "
                  "minimum effect %.2f%s: regression %.3f, no regression %.3f, unresolved %.3f, mean blocks %.1f\n",
                  m.launch_sd, m.request_sd, m.burst_rate, 100 * m.burst_lo, 100 * m.burst_hi, m.trim, m.shift, min_effect,
                  ref,
                  r.regression, r.no_regression, r.unresolved, r.mean_blocks);
    }
  } print{m, min_effect, r};
  for (int t = 0; t < trials; ++t) {
    int used = 0;
    switch (sequential(rng, m, min_effect, first, max_blocks, &used)) {
      case TimingVerdict::regression: r.regression += 1.0 / trials; break;
      case TimingVerdict::no_regression: r.no_regression += 1.0 / trials; break;
      case TimingVerdict::unresolved: r.unresolved += 1.0 / trials; break;
    }
    r.mean_blocks += static_cast<double>(used) / trials;
  }
  return r;
}

// The goal of the gate on a 2-core box: identical builds "no regression" in at least 95% of trials,
// a real 5% slowdown "regression" in at least 95%, at the gate's defaults (5% minimum effect,
// first look after 4 blocks, the default budget of 40 blocks). Machine{}: launch-to-launch spread 2%
// and request noise 3%, what this machine showed for the realistic-prefill test case's TTFT
// (bench/README.md); completion_machine(): the shipped completion case, quieter.
TEST(PairedGateSimulation, IdenticalBuildsPass) {
  Rates r = simulate(Machine{}, 0.05, 400, 1);
  EXPECT_GE(r.no_regression, 0.95) << "regression " << r.regression << " unresolved " << r.unresolved;
  EXPECT_LE(r.regression, 0.02);
}

// TTFT of cases/completion-realistic-long.json on this machine: block values within +-1.5% apart
// from bursts (the run; bench/README.md section 3): launch spread 0.8%, request noise 1%.
Machine completion_machine() {
  Machine m;
  m.launch_sd = 0.008;
  m.request_sd = 0.01;
  return m;
}

TEST(PairedGateSimulation, FivePercentSlowdownIsCaught) {
  Machine m = with_cpu_bursts(completion_machine());
  m.shift = 0.05;
  Rates r = simulate(m, 0.05, 400, 2);
  EXPECT_GE(r.regression, 0.95) << "no regression " << r.no_regression << " unresolved " << r.unresolved
                                << " mean blocks " << r.mean_blocks;
  // On the noisier machine (block spread about 3%) telling 5% from the 3% regression bound takes
  // more blocks than the default budget: printed, not asserted (bench/README.md section 3).
  Machine noisy;
  noisy.shift = 0.05;
  simulate(noisy, 0.05, 400, 2);
  noisy.shift = 0.08;
  EXPECT_GE(simulate(noisy, 0.05, 400, 2).regression, 0.95);
}

TEST(PairedGateSimulation, LargeSlowdownIsCaughtAtTheFirstLook) {
  Machine m;
  m.shift = 0.20;
  Rates r = simulate(m, 0.05, 200, 3);
  EXPECT_GE(r.regression, 0.99);
  EXPECT_LE(r.mean_blocks, 4.5);
}

TEST(PairedGateSimulation, TwoPercentOnAQuietGpu) {
  // The H200 goal: 2% with a 2% minimum effect, on the kernels' GPU time (launch spread 0.2%; the
  // block spread measured there was 0.16%). A regression must be shown above 1.2% (60% of 2%).
  Machine quiet{0.002, 0.002, 0.0, 2};
  EXPECT_GE(simulate(quiet, 0.02, 300, 4).no_regression, 0.95);
  quiet.shift = 0.02;
  EXPECT_GE(simulate(quiet, 0.02, 300, 5).regression, 0.95);
}

TEST(PairedGateSimulation, NoisyMachineStaysHonest) {
  // Spread far above the minimum effect: the gate must not call identical builds a regression; it
  // may stay unresolved, and then it says how many more blocks would settle it.
  Machine noisy{0.15, 0.10, 0.0, 2};
  Rates r = simulate(noisy, 0.05, 200, 6, 4, 8);
  EXPECT_LE(r.regression, 0.03);
  EXPECT_GT(r.unresolved, 0.5);
}

// The noisiest shipped case: cases/chat-tiny-short.json, TTFT about 8 ms, block spread about 12% (its
// 95% interval after 40 blocks was +-4% in the run), judged at its 1 ms floor (12.3%).
// Identical builds must decide within the default budget in 95% of trials: what sized it (40 blocks).
TEST(PairedGateSimulation, TinyChatAtItsFloorDecidesWithinTheDefaultBudget) {
  Machine tiny = with_cpu_bursts(Machine{0.085, 0.05, 0.0, 5});
  Rates r = simulate(tiny, 0.123, 400, 19);
  EXPECT_GE(r.no_regression, 0.95) << "regression " << r.regression << " unresolved " << r.unresolved;
  EXPECT_LE(r.regression, 0.025);
  simulate(tiny, 0.123, 400, 19, 4, 24);  // printed: what 24 blocks gave
}

// cases/batch-tiny.json here (2026-12-02, bench/README.md section 3): one unit per launch (the median
// of its rounds' throughput), blocks of 1.2 s. Over 20 identical-build trials the blocks' robust
// spread was 5-10% in 16 and 11-22% in 4 (noisy spells, whole trials long): launch sd 5.5%, or 12%
// in one trial of five, bursts as measured. Identical builds decide within the default budget (at
// this block time the 180 s floor: 150 blocks) in at least 95% of trials, false alarms stay at the
// sequential level; 40 blocks, the budget before the floor, printed beside it (71%: 7 of the 10
// trials measured there with it were "no regression"). The give-up rule
// forecasts at one standard error's luck: it must not stop identical builds that the budget would
// decide.
Machine batch_tiny() {
  Machine m = with_cpu_bursts(Machine{0.055, 0.0, 0.0, 1});
  m.prompts = 1;
  m.spell_rate = 0.2;
  m.spell_launch_sd = 0.12;
  return m;
}

TEST(PairedGateSimulation, BatchTinyDecidesWithinTheBudgetFloor) {
  const int floor_blocks = static_cast<int>(kDefaultBudgetFloorS / 1.2);
  Rates r = simulate(batch_tiny(), 0.05, 400, 27, 4, floor_blocks);
  EXPECT_GE(r.no_regression, 0.95) << "regression " << r.regression << " unresolved " << r.unresolved;
  EXPECT_LE(r.regression, 0.025);
  simulate(batch_tiny(), 0.05, 400, 27, 4, kDefaultBudgetBlocks);  // printed: the budget before the floor
  Machine slow = batch_tiny();
  slow.shift = 0.10;  // printed: a 10% slowdown at this spread
  EXPECT_LE(simulate(slow, 0.05, 400, 28, 4, floor_blocks).no_regression, 0.025);
}

// The give-up rule's forecast: a dozen blocks whose estimate sits near the minimum effect forecast
// hundreds of blocks at the estimate, but identical builds lie within a standard error of it; the
// hopeful forecast (one standard error nearer to a decision) is what stops the gate.
TEST(Decision, GiveUpForecastsAtAStandardErrorsLuck) {
  // 12 blocks, spread about 12%, estimate about +4% against a 5% minimum effect (the batch-tiny
  // trial that gave up after 12 blocks forecast 798 blocks).
  const double r[] = {0.042, -0.007, -0.108, 0.175, -0.207, 0.134, -0.075, -0.010, 0.158, 0.094, 0.163, 0.080};
  std::vector<PairedUnit> u;
  for (int k = 0; k < 12; ++k) u.push_back({k, k % 2 == 0, "", 100.0, 100.0 * std::exp(r[k])});
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}});
  ASSERT_EQ(d[0].verdict, TimingVerdict::unresolved);
  ASSERT_TRUE(d[0].likely_blocks && d[0].hopeful_blocks);
  EXPECT_GT(*d[0].likely_blocks, 200);
  EXPECT_LT(*d[0].hopeful_blocks, *d[0].likely_blocks / 2);
  EXPECT_EQ(hopeful_blocks(d), d[0].hopeful_blocks);
  // The rule stops on the hopeful forecast: with room for it, the gate goes on; without, it stops.
  EXPECT_FALSE(beyond_budget(d, 12, *d[0].hopeful_blocks));
  EXPECT_TRUE(beyond_budget(d, 12, *d[0].hopeful_blocks / 3));
  EXPECT_FALSE(beyond_budget(d, 10, 1)) << "never before kGiveUpFromBlocks";
}

// A true change within +-3% at the default 5% minimum effect is not called a regression: exactly at
// +3% (the regression bound) no more often than the sequential test's level, below it less.
TEST(PairedGateSimulation, ThreePercentIsNotARegression) {
  Machine m;
  m.shift = 0.03;
  Rates r = simulate(m, 0.05, 400, 11);
  EXPECT_LE(r.regression, 0.05) << "no regression " << r.no_regression << " unresolved " << r.unresolved;
  m.shift = 0.02;
  EXPECT_LE(simulate(m, 0.05, 400, 17).regression, 0.01);
  m.shift = -0.03;
  EXPECT_EQ(simulate(m, 0.05, 200, 12).regression, 0.0);
  Machine quiet = with_cpu_bursts(completion_machine());
  quiet.shift = 0.03;
  EXPECT_LE(simulate(quiet, 0.05, 400, 18).regression, 0.05);
}

// Bursts as measured here (one launch in 16, 12-18% slower): identical builds still "no regression"
// in at least 95% of trials, false alarms at most 2.5%, a 5% slowdown still caught in 95%. The plain
// mean (trim 0) is printed beside it: that is what the gate did before.
TEST(PairedGateSimulation, BurstsHereNeitherDecideNorBlock) {
  for (const Machine& base : {Machine{}, completion_machine()}) {
    Machine m = with_cpu_bursts(base);
    Rates same = simulate(m, 0.05, 400, 13);
    EXPECT_GE(same.no_regression, 0.95) << "regression " << same.regression << " unresolved " << same.unresolved;
    EXPECT_LE(same.regression, 0.025);
    Machine plain = m;
    plain.trim = 0;
    simulate(plain, 0.05, 400, 13);
  }
  Machine slow = with_cpu_bursts(completion_machine());
  slow.shift = 0.05;
  EXPECT_GE(simulate(slow, 0.05, 400, 14).regression, 0.95);
  slow.trim = 0;
  simulate(slow, 0.05, 400, 14);
}

// The decode of cases/completion-realistic-long.json here (bench/README.md section 3, 2026-12-02):
// itl_ms is one unit per launch; its block spread was 10-16% (24% in the noisiest trial), and the
// median of the throughput reference timed through each launch explained most of it (r 0.74-0.78,
// slope 1.6-1.9; the block spread 13.5% -> 8.5% in one trial). Modelled per launch: the machine's
// share sd 7% (seen by the reference with 1.5% noise of its own, slope 1.9), the rest 5.5%, bursts
// as measured (one launch in 16, 12-18%), half of them the machine's.
Machine completion_decode(bool with_reference) {
  Machine m = with_cpu_bursts(Machine{0.055, 0.01, 0.0, 1});
  m.prompts = 1;
  m.machine_sd = 0.07;
  m.reference_sd = 0.015;
  m.slope = 1.9;
  m.burst_seen = 0.5;
  m.with_reference = with_reference;
  return m;
}

// With the machine term the decode figure decides on identical builds within the default budget far
// more often, false alarms stay at the sequential level, and a 5% slowdown is still caught; without
// the reference (printed beside it) most trials end unresolved.
TEST(PairedGateSimulation, MachineTermResolvesTheCompletionDecode) {
  Rates with = simulate(completion_decode(true), 0.05, 400, 21);
  Rates without = simulate(completion_decode(false), 0.05, 400, 21);
  EXPECT_LE(with.regression, 0.025);
  EXPECT_GE(with.no_regression, without.no_regression + 0.2) << "with " << with.no_regression << " without " << without.no_regression;
  // A 5% slowdown, with and without the term (printed: at this spread a 5% change is told from the
  // 3% regression bound within the budget in few trials either way; the rest end unresolved, never
  // "no regression" more often than the sequential level allows).
  Machine slow = completion_decode(true);
  slow.shift = 0.05;
  // At the minimum effect exactly the sequential level of "no regression" is about 5% here (the
  // term's lost degree of freedom, the bursts); 400 trials carry +-1.1% of it.
  Rates caught = simulate(slow, 0.05, 400, 22);
  EXPECT_LE(caught.no_regression, 0.06);
  slow.with_reference = false;
  simulate(slow, 0.05, 400, 22);
  // A true +3% (the regression bound) is called a regression about as often as the sequential level
  // allows (2000 trials: 5.5% with the term, where more trials decide at all; 3.5% without it).
  Machine three = completion_decode(true);
  three.shift = 0.03;
  EXPECT_LE(simulate(three, 0.05, 2000, 23).regression, 0.065);
  three.with_reference = false;
  simulate(three, 0.05, 2000, 23);
  // Under +2% it is rare.
  three.with_reference = true;
  three.shift = 0.02;
  EXPECT_LE(simulate(three, 0.05, 400, 26).regression, 0.025);
}

// A reference that sees nothing of the figure's spread (the figure's noise all its own): the term's
// slope is noise around 0, one degree of freedom is lost, and false alarms stay at the sequential
// level.
TEST(PairedGateSimulation, MachineTermThatSeesNothingStaysHonest) {
  Machine blind = with_cpu_bursts(Machine{0.02, 0.03, 0.0, 2});
  blind.with_reference = true;
  blind.reference_sd = 0.03;
  Rates r = simulate(blind, 0.05, 400, 24);
  EXPECT_LE(r.regression, 0.025);
  EXPECT_GE(r.no_regression, 0.95) << "unresolved " << r.unresolved;
  blind.shift = 0.05;
  simulate(blind, 0.05, 400, 25);
}

// The burst rate and sizes of the H200 (one launch in five, 10-40%) on a host-clock figure with a
// 3% launch spread: the trimmed mean keeps false alarms at the sequential level; identical builds
// resolve at the wider minimum effect the CUDA default gives host-clock figures.
TEST(PairedGateSimulation, H200BurstsStayHonest) {
  Machine h{0.03, 0.03, 0.0, 2, 0.19, 0.10, 0.40};
  Rates same = simulate(h, kH200HostMinEffect, 400, 15, 4, 18);
  EXPECT_LE(same.regression, 0.025);
  EXPECT_GE(same.no_regression, 0.95) << "unresolved " << same.unresolved;
  Rates strict = simulate(h, 0.05, 400, 16);
  EXPECT_LE(strict.regression, 0.025);
}

// The gate's default on CUDA with the kernel probe (flow/paired/paired_runner.h gated_figures): GPU kernel
// time at 2% and TTFT at 25%, decided together (Holm), stopping when both are decided or one
// regressed. The machine is the H200 as recorded (fixtures/logs/h200-live/gate/README.md): kernel
// time's launch spread 0.2%; TTFT's 3%, and host bursts in either arm: measured over every gate.json
// there, 71 of 376 launches (19%) ran 10-40% slower than their arm's median (the default); the
// heavier model the CUDA default was first sized with, one launch in four 20-50% slower, is the
// stress case. A 2% longer prompt is +3% of kernel time and +2% of TTFT.
struct GpuMachine {
  double kernel_shift = 0, ttft_shift = 0;
  double burst_rate = 0.19, burst_lo = 0.10, burst_hi = 0.40;
};

TimingVerdict gpu_default_sequential(std::mt19937_64& rng, const GpuMachine& m, int max_blocks, int* blocks_used) {
  std::normal_distribution<double> kernel_noise(0, 0.002), ttft_noise(0, 0.03);
  std::uniform_real_distribution<double> u01(0, 1), burst(m.burst_lo, m.burst_hi);
  std::vector<PairedUnit> kernel, ttft;
  auto ttft_launch = [&](double shift) {
    return 100 * (1 + shift) * std::exp(ttft_noise(rng)) * (u01(rng) < m.burst_rate ? 1 + burst(rng) : 1.0);
  };
  for (int k = 0; k < max_blocks; ++k) {
    const bool a_first = k % 2 == 0;
    kernel.push_back({k, a_first, "", 60 * std::exp(kernel_noise(rng)), 60 * (1 + m.kernel_shift) * std::exp(kernel_noise(rng))});
    ttft.push_back({k, a_first, "p", ttft_launch(0), ttft_launch(m.ttft_shift)});
    const int n = k + 1;
    if (n < 4 || n % 2 != 0) continue;
    DecisionOptions o;
    auto d = decide_figures({{"gpu_kernel_ms_per_launch", true, 0.02, kernel}, {"ttft_ms", true, 0.25, ttft}}, o);
    const bool regression = d[0].verdict == TimingVerdict::regression || d[1].verdict == TimingVerdict::regression;
    const bool decided = d[0].verdict != TimingVerdict::unresolved && d[1].verdict != TimingVerdict::unresolved;
    if (regression || decided || n == max_blocks || beyond_budget(d, n, max_blocks)) {
      *blocks_used = n;
      return regression ? TimingVerdict::regression : decided ? TimingVerdict::no_regression : TimingVerdict::unresolved;
    }
  }
  return TimingVerdict::unresolved;
}

Rates simulate_gpu_default(const GpuMachine& m, int trials, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Rates r;
  for (int t = 0; t < trials; ++t) {
    int used = 0;
    switch (gpu_default_sequential(rng, m, 18, &used)) {  // 18 blocks: about the default 250 s budget there
      case TimingVerdict::regression: r.regression += 1.0 / trials; break;
      case TimingVerdict::no_regression: r.no_regression += 1.0 / trials; break;
      case TimingVerdict::unresolved: r.unresolved += 1.0 / trials; break;
    }
    r.mean_blocks += static_cast<double>(used) / trials;
  }
  std::printf("  simulated GPU default (kernel %+.3f, ttft %+.3f, bursts %.2f of launches +%.0f..%.0f%%): regression %.3f, "
              "no regression %.3f, unresolved %.3f, mean blocks %.1f\n", m.kernel_shift, m.ttft_shift, m.burst_rate,
              100 * m.burst_lo, 100 * m.burst_hi, r.regression, r.no_regression, r.unresolved, r.mean_blocks);
  return r;
}

TEST(PairedGateSimulation, GpuDefaultPassesIdenticalBuildsDespiteHostBursts) {
  Rates r = simulate_gpu_default(GpuMachine{}, 400, 7);
  EXPECT_GE(r.no_regression, 0.95) << "regression " << r.regression << " unresolved " << r.unresolved;
  EXPECT_LE(r.regression, 0.02);
  // The stress case: 44% of blocks hold a burst, more than a 20% trimming drops; still no false
  // alarm, and most trials decide.
  Rates heavy = simulate_gpu_default(GpuMachine{0, 0, 0.25, 0.20, 0.50}, 400, 7);
  EXPECT_LE(heavy.regression, 0.02);
  EXPECT_GE(heavy.no_regression, 0.90);
}

TEST(PairedGateSimulation, GpuDefaultCatchesTwoPercentMoreKernelTime) {
  Rates r = simulate_gpu_default(GpuMachine{0.03, 0.02}, 400, 8);
  EXPECT_GE(r.regression, 0.95) << "no regression " << r.no_regression << " unresolved " << r.unresolved;
  // A host-side slowdown the kernels do not see is caught only at TTFT's wider minimum effect.
  Rates host = simulate_gpu_default(GpuMachine{0, 0.40}, 400, 9);
  EXPECT_GE(host.regression, 0.95);
}

TEST(Decision, UnresolvedSaysHowManyMoreBlocks) {
  std::vector<PairedUnit> u;
  const double noise[] = {0.06, -0.05, 0.09, -0.03};
  for (int k = 0; k < 4; ++k) u.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(0.03 + noise[k])});
  auto d = decide_figures({{"ttft_ms", true, 0.05, u}});
  ASSERT_EQ(d[0].verdict, TimingVerdict::unresolved) << decision_line(d[0]);
  ASSERT_TRUE(d[0].more_blocks.has_value());
  EXPECT_GE(*d[0].more_blocks, 2);
  EXPECT_NE(decision_line(d[0]).find("more blocks would likely settle it"), std::string::npos);
}

TEST(Decision, HolmProtectsTheFamily) {
  // Two figures each with one-sided p about 0.02: alone each is a regression at 0.025; with Holm
  // the larger one needs p < 0.025 after doubling the smaller: at most one is called.
  std::vector<PairedUnit> a, b;
  const double na[] = {0.10, 0.00, 0.09, 0.01, 0.08, 0.02};
  for (int k = 0; k < 6; ++k) {
    a.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(na[k])});
    b.push_back({k, k % 2 == 0, "p", 100, 100 * std::exp(na[5 - k])});
  }
  auto alone = decide_figures({{"x", true, 0.05, a}});
  auto both = decide_figures({{"x", true, 0.05, a}, {"y", true, 0.05, b}});
  EXPECT_GE(both[0].p_holm, alone[0].p_holm);
}

// cases/generic-openai-llama-server.json's TTFT here, judged at its 1 ms floor (28.9% of 3.5 ms; the
// regression bound 17.3%): the noisiest figure any shipped case gates. Its identical-build trials of
// 2026-12-04/05 recorded 596 launches (fixtures/logs/gate-interleaved/generic-launches.txt: per launch
// the median TTFT of each of the 3 prompts, ms); per-prompt values spread 36% in log and block values
// 29%, a bimodal TTFT (2.5 against 5-7 ms: llama-server's prompt cache serves some prompts whole).
// Every block from two of those launches drawn at random, the gate's looks and its budget floor
// (blocks of 1.1 s: about 160 blocks in 180 s). Live, 1 of those 18 trials was a false alarm (+37.4%
// after 10 blocks). Resampled, the trimmed mean with Yuen's interval alone called 0.33% of trials a
// regression: a few blocks that fall in one mode of the bimodal TTFT have a tiny spread among
// themselves. The signed-rank confirmation and the within-block floor under the standard error
// (paired_stats.h) take that to 0.07%. The recorded trials' arms differ no more than chance says
// (bench/recorded_arm_dispersion.py: sum of z^2 13.4 on 18 trials), so iid draws are a fair model.
// Per recorded launch, the median TTFT of each of its 3 prompts (ms).
std::vector<std::array<double, 3>> generic_openai_launches() {
  std::ifstream in(FLASHPROOF_SOURCE_DIR "/fixtures/logs/gate-interleaved/generic-launches.txt");
  std::vector<std::array<double, 3>> pool;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    std::string session, arm;
    int trial = 0;
    std::array<double, 3> v{};
    if (row >> session >> trial >> arm >> v[0] >> v[1] >> v[2]) pool.push_back(v);
  }
  return pool;
}

constexpr int kGenericMaxBlocks = 160;
constexpr double kGenericFloorEffect = 0.289;

TEST(PairedGateSimulation, GenericOpenAiRecordedLaunchesResampled) {
  const auto pool = generic_openai_launches();
  ASSERT_GE(pool.size(), 500u);
  constexpr int kTrials = 1500;
  DecisionOptions trimmed_only;  // the procedure before the confirmation and the floor
  trimmed_only.rank_alpha = 1;
  trimmed_only.within_floor = false;
  int regression[2] = {0, 0}, no_regression = 0;
  double blocks = 0;
  for (int with_both : {1, 0}) {
    std::mt19937_64 rng(41);  // the same draws for both procedures
    std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
    for (int t = 0; t < kTrials; ++t) {
      auto add_block = [&](int k, std::vector<PairedUnit>& units) {
        const auto& la = pool[pick(rng)];
        const auto& lb = pool[pick(rng)];
        for (int p = 0; p < 3; ++p) units.push_back({k, k % 2 == 0, "p" + std::to_string(p), la[p], lb[p]});
      };
      int used = 0;
      const TimingVerdict v = decide_sequentially(add_block, kGenericFloorEffect, 4, kGenericMaxBlocks, kBlockTrim, &used,
                                                  with_both ? DecisionOptions{} : trimmed_only);
      regression[with_both] += v == TimingVerdict::regression;
      if (with_both) {
        no_regression += v == TimingVerdict::no_regression;
        blocks += static_cast<double>(used) / kTrials;
      }
    }
  }
  std::printf("  resampled from %zu recorded launches, %d trials: regression %.4f (the trimmed mean alone %.4f), no regression %.4f, "
              "mean blocks %.1f\n", pool.size(), kTrials, regression[1] / double(kTrials), regression[0] / double(kTrials),
              no_regression / double(kTrials), blocks);
  EXPECT_GE(no_regression, 0.95 * kTrials);
  EXPECT_LE(regression[1], 0.002 * kTrials);
  EXPECT_LT(regression[1], regression[0]);
}

}  // namespace
}  // namespace fp
