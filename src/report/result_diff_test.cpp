#include "report/result_diff.h"

#include <gtest/gtest.h>

namespace fp {
namespace {

// A figure from one launch with these samples.
FigureResult figure(const std::string& name, std::vector<double> samples, bool gate = true, bool lower = true) {
  FigureResult f;
  f.name = name;
  f.samples = std::move(samples);
  f.summary = summarize(f.samples);
  f.gate = gate;
  f.lower_is_better = lower;
  f.launch_medians = {f.summary.median};
  f.min_effect = MinEffect{0.05, 0};
  return f;
}

// A figure from several launches with these medians (one sample each).
FigureResult launches(const std::string& name, std::vector<double> medians) {
  FigureResult f = figure(name, medians);
  f.launch_medians = std::move(medians);
  return f;
}

RunResult run(const std::string& dir) {
  RunResult r;
  r.case_name = "chat-tiny-short";
  r.output_dir = dir;
  r.complete = true;
  r.verdict.activity = Activity::Active;
  r.verdict.fused_backends = {{"CPU", 30}};
  r.verdict.as_expected = true;
  r.fingerprint_id = "cpu-2c-llama-server-b11669";
  r.figures = {figure("ttft_ms", {10, 10.5, 9.5, 10.2, 9.8}), figure("decode_tokens_per_s", {100, 101, 99, 100, 100}, false, false)};
  r.answers = {{"p1", "hello world", true, "identical", ""}};
  return r;
}

std::map<std::string, FigurePolicy> policies() {
  return {{"ttft_ms", {Direction::lower_is_better, true, 0.05}},
          {"decode_tokens_per_s", {Direction::higher_is_better, false, 0.05}}};
}

TEST(ResultDiff, IdenticalRunsShowNoChange) {
  ResultDiff d = diff_results(run("a"), run("b"), policies());
  EXPECT_FALSE(d.verdict_changed());
  EXPECT_FALSE(d.regressed());
  EXPECT_FALSE(d.answers_changed());
  ASSERT_EQ(d.figures.size(), 2u);
  EXPECT_EQ(d.figures[0].status, "pass");
  std::string text = format_result_diffs({d});
  EXPECT_NE(text.find("verdict and status changes: none"), std::string::npos) << text;
  EXPECT_NE(text.find("answers: identical"), std::string::npos) << text;
}

TEST(ResultDiff, RegressionLostKernelAndChangedAnswerAreReportedVerdictFirst) {
  RunResult before = run("old"), after = run("new");
  before.figures[0] = launches("ttft_ms", {10, 10.5, 9.5, 10.2, 9.8});  // five launches: a known spread
  after.verdict.activity = Activity::NotActive;
  after.verdict.fused_backends.clear();
  after.verdict.as_expected = false;
  after.failures = {"fused attention expected active"};
  after.figures[0] = figure("ttft_ms", {30, 31, 29, 30, 30});  // one launch, median 30
  after.answers[0].text = "hello there";
  ResultDiff d = diff_results(before, after, policies());
  EXPECT_TRUE(d.verdict_changed());
  EXPECT_TRUE(d.regressed());
  EXPECT_TRUE(d.answers_changed());
  EXPECT_EQ(d.figures[0].status, "regressed");
  EXPECT_DOUBLE_EQ(d.figures[0].change, 20.0);
  std::string text = format_result_diffs({diff_results(before, before, policies()), d});
  size_t verdict = text.find("chat-tiny-short: verdict: active (CPU 30) -> not active");
  size_t status = text.find("status: pass -> fail");
  size_t table = text.find("ttft_ms");
  ASSERT_NE(verdict, std::string::npos) << text;
  ASSERT_NE(status, std::string::npos) << text;
  EXPECT_LT(verdict, table);
  EXPECT_NE(text.find("+200.000%"), std::string::npos) << text;
  EXPECT_NE(text.find("--- reference/p1"), std::string::npos) << text;
  // the case with the verdict change is printed before the unchanged one
  EXPECT_LT(text.find("== chat-tiny-short (pass -> fail)"), text.find("== chat-tiny-short (pass -> pass)")) << text;
}

TEST(ResultDiff, KernelSwapIsNamedAndCounts) {
  RunResult before = run("old"), after = run("new");
  before.kernel_families = {{"fattn-mma", true, {0.92}}, {"fattn-vec", true, {0.08}}};
  after.kernel_families = {{"fattn-vec", true, {0.88}}, {"fattn-helpers", true, {0.12}}};
  ResultDiff d = diff_results(before, after, policies());
  EXPECT_TRUE(d.kernels_changed());
  ASSERT_EQ(d.kernel_changes.size(), 1u);
  EXPECT_EQ(d.kernel_changes[0],
            "KERNEL SWAP: fattn-mma kernels replaced by fattn-vec, fattn-helpers kernels: share 92% -> 0% / 8.0% -> 88%, 0% -> 12%");
  const std::string text = format_result_diffs({d});
  EXPECT_NE(text.find("attention kernel set changed: 1 case(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("CHANGED KERNEL SWAP: fattn-mma kernels replaced by fattn-vec"), std::string::npos) << text;
  EXPECT_NE(text.find("attention kernels (old -> new):\n  fattn-mma: 92% -> 0%"), std::string::npos) << text;
  // The same set: nothing changed. A set gone from the new run is evidence lost.
  after.kernel_families = before.kernel_families;
  EXPECT_FALSE(diff_results(before, after, policies()).kernels_changed());
  after.kernel_families.clear();
  ResultDiff gone = diff_results(before, after, policies());
  ASSERT_EQ(gone.kernel_changes.size(), 1u);
  EXPECT_EQ(gone.kernel_changes[0], "attention kernel set: fattn-mma 92%, fattn-vec 8.0% -> not recorded (no kernel tally in the new run)");
}

TEST(ResultDiff, ProbedCheckChangesOnlyWhenItsOutcomeDoes) {
  RunResult before = run("old"), after = run("new");
  before.probed_check = "attention kernels identical to the evidence pass (fused: a; unfused: none); GPU 0.0123 ms/token, attention 0.004 ms/token";
  after.probed_check = "attention kernels identical to the evidence pass (fused: a; unfused: none); GPU 0.0131 ms/token, attention 0.005 ms/token";
  EXPECT_FALSE(diff_results(before, after, policies()).verdict_changed());
  after.probed_check = "attention kernels DIFFER from the evidence pass: fused attention kernels differ: only in the evidence pass: a";
  ResultDiff d = diff_results(before, after, policies());
  ASSERT_TRUE(d.verdict_changed());
  EXPECT_EQ(d.verdict_changes[0].rfind("probed check: attention kernels identical", 0), 0u) << d.verdict_changes[0];
}

TEST(ResultDiff, LostEvidenceLevelIsAVerdictChange) {
  RunResult before = run("old"), after = run("new");
  before.verdict.levels_used = {"log", "placement", "kernels"};
  after.verdict.levels_used = {"log", "placement"};
  ResultDiff d = diff_results(before, after, policies());
  ASSERT_TRUE(d.verdict_changed());
  EXPECT_EQ(d.verdict_changes[0], "evidence levels: log, placement, kernels -> log, placement");
}

TEST(ResultDiff, NoiseIsNotARegression) {
  RunResult before = run("old"), after = run("new");
  // Launch medians that scatter (MAD 7 around 12): a one-launch 16 is beyond 5% but within the noise.
  before.figures[0] = launches("ttft_ms", {10, 20, 5, 30, 12});
  after.figures[0] = figure("ttft_ms", {14, 25, 6, 40, 16});
  ResultDiff d = diff_results(before, after, {{"ttft_ms", {Direction::lower_is_better, true, 0.05}}});
  EXPECT_EQ(d.figures[0].status, "within_noise");
  EXPECT_FALSE(d.regressed());
}

TEST(ResultDiff, OneLaunchEachSideResolvesNothingBeyondTheEffect) {
  // No launch-to-launch spread is known from one launch: a tripling is unresolved, not a verdict.
  RunResult before = run("old"), after = run("new");
  after.figures[0] = figure("ttft_ms", {30, 31, 29, 30, 30});
  ResultDiff d = diff_results(before, after, policies());
  EXPECT_EQ(d.figures[0].status, "within_noise");
  EXPECT_FALSE(d.regressed());
  // Within the minimum effect it passes.
  after.figures[0] = figure("ttft_ms", {10.2, 10.4, 9.8, 10.1, 10.0});
  EXPECT_EQ(diff_results(before, after, policies()).figures[0].status, "pass");
}

TEST(ResultDiff, RemovedAndNewFiguresAndFingerprintChanges) {
  RunResult before = run("old"), after = run("new");
  after.figures.erase(after.figures.begin());
  after.figures.push_back(figure("e2e_ms", {5, 5, 5}));
  Fingerprint f;
  f.cpu_model = "cpu";
  f.cores = 2;
  f.runtime = "llama-server";
  f.runtime_build = "11000";
  before.fingerprint = f.to_json();
  f.runtime_build = "11669";
  after.fingerprint = f.to_json();
  after.fingerprint_id = f.id();
  ResultDiff d = diff_results(before, after, policies());
  EXPECT_EQ(d.figures[0].status, "removed");
  EXPECT_TRUE(d.regressed());  // a gated figure that is no longer measured
  EXPECT_EQ(d.figures.back().status, "new");
  ASSERT_FALSE(d.fingerprint_changes.empty());
  std::string text = format_result_diffs({d});
  EXPECT_NE(text.find("runtime_build: 11000 -> 11669"), std::string::npos) << text;
}

}  // namespace
}  // namespace fp
