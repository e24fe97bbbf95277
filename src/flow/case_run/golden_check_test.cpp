#include "flow/case_run/golden_check.h"
#include "flow/case_run/golden_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "case/case_file.h"
#include "evidence/kernel_set.h"
#include "flow/passes/probed_check.h"
#include "testing/recorded_runs.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A fresh folder per test, removed on success and kept (path printed) on failure.
class GoldenCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fp_golden_check_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "test files kept in " << dir_ << "\n";
    else fs::remove_all(dir_);
  }
  std::string path(const std::string& p) const { return (dir_ / p).string(); }

  // A complete, passing run of case "chat" on machine "m1" whose gated TTFT p95 had these launch medians.
  RunResult run(std::vector<double> launch_medians) const {
    RunResult r;
    r.case_name = "chat";
    r.case_file = "cases/chat.json";
    r.fingerprint_id = "m1";
    r.output_dir = path("results/run");
    r.complete = true;
    r.verdict.activity = Activity::Active;
    r.verdict.fused_backends = {{"CPU", 30}};
    r.verdict.as_expected = true;
    r.launches = static_cast<int>(launch_medians.size());
    FigureResult f;
    f.name = "ttft_ms_p95";
    f.samples = launch_medians;
    f.summary = summarize(f.samples);
    f.gate = true;
    f.launch_medians = std::move(launch_medians);
    f.min_effect = MinEffect{0.05, 0};
    r.figures = {f};
    r.answers = {{"greeting", "hello", true, "no reference", ""}};
    return r;
  }
  fs::path dir_;
};

// A recorded H200 tally (fixtures/logs/h200-live), as text.
std::string recorded_tally(const std::string& name) {
  auto text = read_file(fp::testing::fixture("logs/h200-live/" + name + ".kernels.tsv"));
  EXPECT_TRUE(text.ok());
  return text ? *text : "";
}

// The same tally with every mma kernel (flash_attn_ext_f16) renamed to a vec kernel recorded in
// another H200 run: what a build that loses the mma path for this shape would run.
std::string mma_swapped_for_vec(const std::string& tally) {
  std::string out;
  for (const auto& line : split_lines(tally)) {
    const size_t name = line.find("\tvoid flash_attn_ext_f16<");
    out += (name == std::string::npos ? line
                                      : line.substr(0, name) +
                                            "\tvoid flash_attn_ext_vec<128, 2, (ggml_type)1, (ggml_type)1, false>(char const*, "
                                            "char const*, char const*, char const*, char const*, int const*, float*, float2*, float)") +
           "\n";
  }
  return out;
}

// A run's kernel set from tallies of its probed launches (the evidence pass first).
std::vector<FamilySamples> kernel_set(const std::vector<std::string>& tallies) {
  std::vector<FamilySamples> samples;
  std::vector<std::string> launches;
  for (const auto& text : tallies) {
    auto t = parse_kernel_tally(text, "tally.tsv");
    EXPECT_TRUE(t.ok()) << (t ? "" : t.error().message);
    if (t) add_kernel_launch(samples, launches, family_shares(classify_kernels(*t, fp::testing::llama_signatures())), "launch");
  }
  return samples;
}

std::vector<std::string> lines_with(const std::vector<std::string>& lines, const std::string& part) {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) out.push_back(l);
  return out;
}

TEST_F(GoldenCheck, NoGoldenFailsSayingHowToRecordOne) {
  RunResult r = run({10});
  compare_goldens({path("golden")}, r);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_THAT(r.failures[0], HasSubstr("no golden for this machine: " + path("golden") + "/m1/chat.json does not exist"));
  EXPECT_THAT(r.failures[0], HasSubstr("flashproof run cases/chat.json --record-missing` (5 launches)"));
  EXPECT_THAT(r.failures[0], HasSubstr("--launches 5"));
  EXPECT_EQ(r.golden_status, "missing");
}

TEST_F(GoldenCheck, RecordsFromLaunchesThenComparesOneLaunchAgainstIt) {
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;
  RunResult rec = run({10, 11, 10.5, 10.2, 10.8});
  compare_goldens(o, rec);
  ASSERT_THAT(rec.failures, IsEmpty());
  EXPECT_EQ(rec.golden_status, "recorded");
  EXPECT_EQ(rec.answers[0].reference, "recorded");
  auto g = load_golden(path("golden/m1/chat.json"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_DOUBLE_EQ(g->figures.at("ttft_ms_p95").median, 10.5);
  EXPECT_NEAR(g->figures.at("ttft_ms_p95").spread, 0.3, 1e-12);
  EXPECT_EQ(g->figures.at("ttft_ms_p95").n, 5u);
  EXPECT_TRUE(fs::exists(path("golden/m1/chat/verdict.json")));
  EXPECT_TRUE(fs::exists(path("golden/m1/chat/answers/greeting.txt")));

  RunResult same = run({10.6});
  compare_goldens({path("golden")}, same);
  EXPECT_THAT(same.failures, IsEmpty());
  EXPECT_EQ(same.golden_status, "compared");
  EXPECT_EQ(same.answers[0].reference, "identical");
  EXPECT_EQ(lines_with(same.golden_lines, "pass [gate] ttft_ms_p95: pass: worse by 0.1").size(), 1u) << join(same.golden_lines, "\n");
  EXPECT_EQ(lines_with(same.golden_lines, "verdict as recorded: active (CPU 30)").size(), 1u);

  RunResult slower = run({18});  // +71%: beyond the golden's launches widened for the sitting (band 65%)
  compare_goldens({path("golden")}, slower);
  ASSERT_EQ(slower.failures.size(), 1u);
  EXPECT_THAT(slower.failures[0], HasSubstr("figure ttft_ms_p95: regressed: worse by 7.5 (71.4286%)"));
  EXPECT_THAT(slower.failures[0], HasSubstr("(compare " + path("golden/m1/chat.json") + " with "));
}

TEST_F(GoldenCheck, AnAttachedServersGoldenSaysItsBandComesFromRounds) {
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;
  RunResult rec = run({10, 11, 10.5, 10.2, 10.8});
  rec.attached = "http://127.0.0.1:8080";
  compare_goldens(o, rec);
  ASSERT_THAT(rec.failures, IsEmpty());
  auto g = load_golden(path("golden/m1/chat.json"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->figures.at("ttft_ms_p95").band_source, BandSource::rounds);
  RunResult launched = run({10, 11, 10.5, 10.2, 10.8});
  launched.case_name = "chat2";
  compare_goldens(o, launched);
  auto g2 = load_golden(path("golden/m1/chat2.json"));
  ASSERT_TRUE(g2.ok()) << g2.error().message;
  EXPECT_EQ(g2->figures.at("ttft_ms_p95").band_source, BandSource::launches);
}

TEST_F(GoldenCheck, FiguresKeyedByConcurrencyLevelAreRecordedAndComparedEachOnItsOwn) {
  // A case with plan.concurrency: the job's gated figure at each level (flow/passes/figures.h case_figures).
  auto levelled = [&](std::vector<double> c1, std::vector<double> c4) {
    RunResult r = run(c1);
    r.figures[0].name = "c1.ttft_ms_p95";
    FigureResult f = r.figures[0];
    f.name = "c4.ttft_ms_p95";
    f.samples = c4;
    f.summary = summarize(c4);
    f.launch_medians = c4;
    r.figures.push_back(f);
    return r;
  };
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;
  RunResult rec = levelled({10, 11, 10.5, 10.2, 10.8}, {40, 41, 40.5, 40.2, 40.8});
  compare_goldens(o, rec);
  ASSERT_THAT(rec.failures, IsEmpty());
  auto g = load_golden(path("golden/m1/chat.json"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_DOUBLE_EQ(g->figures.at("c1.ttft_ms_p95").median, 10.5);
  EXPECT_DOUBLE_EQ(g->figures.at("c4.ttft_ms_p95").median, 40.5);
  EXPECT_TRUE(g->figures.at("c4.ttft_ms_p95").gate);

  // Level 4 slower, level 1 as before: only level 4 fails.
  RunResult slower = levelled({10.6}, {70});
  compare_goldens({path("golden")}, slower);
  ASSERT_EQ(slower.failures.size(), 1u) << join(slower.failures, "\n");
  EXPECT_THAT(slower.failures[0], HasSubstr("figure c4.ttft_ms_p95: regressed"));
  EXPECT_EQ(lines_with(slower.golden_lines, "pass [gate] c1.ttft_ms_p95: pass").size(), 1u) << join(slower.golden_lines, "\n");
}

TEST_F(GoldenCheck, RecordingNeedsEnoughLaunchesAndWritesNothingOtherwise) {
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;
  RunResult r = run({10});
  compare_goldens(o, r);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_THAT(r.failures[0], HasSubstr("recording the golden failed: figure \"ttft_ms_p95\": 1 launch(es); a golden needs at least 3"));
  EXPECT_FALSE(fs::exists(path("golden/m1/chat.json")));
  EXPECT_FALSE(fs::exists(path("golden/m1/chat/answers")));
}

TEST_F(GoldenCheck, FailingRunRecordsNothing) {
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;
  RunResult r = run({10, 11, 12});
  r.failures = {"fused attention expected active"};
  compare_goldens(o, r);
  EXPECT_FALSE(fs::exists(path("golden/m1")));
  EXPECT_THAT(r.golden_lines, Contains(HasSubstr("nothing recorded: this run failed")));
}

TEST_F(GoldenCheck, AnswersOnlyRecordingLeavesTimingToReviewedGoldens) {
  // CTest's setup test: answers and the verdict, one launch, figures not compared.
  GoldenCheckOptions setup{path("build-golden")};
  setup.record_missing_answers = true;
  RunResult first = run({10});
  compare_goldens(setup, first);
  ASSERT_THAT(first.failures, IsEmpty());
  EXPECT_EQ(first.golden_status, "not compared");
  EXPECT_FALSE(fs::exists(path("build-golden/m1/chat.json")));
  EXPECT_TRUE(fs::exists(path("build-golden/m1/chat/answers/greeting.txt")));
  EXPECT_TRUE(fs::exists(path("build-golden/m1/chat/verdict.json")));

  // The case test: answers against the setup's, timing against reviewed goldens; none for m1.
  GoldenCheckOptions check{path("build-golden"), path("reviewed")};
  RunResult second = run({50});
  compare_goldens(check, second);
  EXPECT_THAT(second.failures, IsEmpty());
  EXPECT_EQ(second.golden_status, "not compared");
  EXPECT_EQ(second.answers[0].reference, "identical");
  EXPECT_THAT(second.golden_lines,
              Contains("figures not compared: no reviewed golden for fingerprint m1 (" + path("reviewed") + "/m1/chat.json does not exist)"));
  EXPECT_FALSE(fs::exists(path("reviewed")));  // never recorded into

  // With a reviewed golden for m1, its figures decide; the answers still come from the setup.
  Golden g;
  g.fingerprint = "m1";
  g.figures["ttft_ms_p95"] = {10, 0.2, 5, Direction::lower_is_better, true};
  fs::create_directories(path("reviewed/m1"));
  ASSERT_TRUE(save_golden_atomic(path("reviewed/m1/chat.json"), g).ok());
  RunResult third = run({50});
  compare_goldens(check, third);
  ASSERT_EQ(third.failures.size(), 1u);
  EXPECT_THAT(third.failures[0], HasSubstr("figure ttft_ms_p95: regressed"));
  EXPECT_EQ(third.golden_status, "compared");
  EXPECT_EQ(third.golden_dir, path("reviewed") + "/m1");
  EXPECT_EQ(third.answers[0].reference, "identical");
}

TEST_F(GoldenCheck, ChangedVerdictOrAnswerFails) {
  GoldenCheckOptions setup{path("g")};
  setup.record_missing_answers = true;
  RunResult first = run({10});
  compare_goldens(setup, first);
  ASSERT_THAT(first.failures, IsEmpty());

  RunResult moved = run({10});
  moved.verdict.fused_backends = {{"CUDA0", 30}};
  moved.answers[0].text = "hello there";
  compare_goldens(setup, moved);
  ASSERT_EQ(moved.failures.size(), 2u);
  EXPECT_THAT(moved.failures[0], HasSubstr("answer greeting differs from its reference"));
  EXPECT_THAT(moved.failures[1], HasSubstr("verdict differs from the one recorded with the golden (" + path("g/m1/chat/verdict.json") +
                                           "): active (CPU 30) -> active (CUDA0 30)"));
  // The same devices with another node count is the same verdict.
  RunResult recount = run({10});
  recount.verdict.fused_backends = {{"CPU", 28}};
  compare_goldens(setup, recount);
  EXPECT_THAT(recount.failures, IsEmpty());
}

TEST_F(GoldenCheck, KernelSwapAgainstTheGoldenIsNamedAndFailsUntilAccepted) {
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;
  RunResult rec = run({10, 11, 10.5});
  rec.kernel_families = kernel_set({recorded_tally("fa_on.verbose"), recorded_tally("fa_on.quiet"), recorded_tally("fa_on.quiet")});
  compare_goldens(o, rec);
  ASSERT_THAT(rec.failures, IsEmpty());
  auto g = load_golden(path("golden/m1/chat.json"));
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(kernel_families_text(g->kernel_families), "fattn-mma 43%, fattn-vec 29%, fattn-helpers 27%");
  EXPECT_EQ(g->kernel_families.at("fattn-mma").n, 3u);

  RunResult same = run({10.5});
  same.kernel_families = kernel_set({recorded_tally("fa_on.verbose"), recorded_tally("fa_on.quiet")});
  compare_goldens({path("golden")}, same);
  EXPECT_THAT(same.failures, IsEmpty());
  EXPECT_EQ(lines_with(same.golden_lines, "kernels: fattn-mma: 43% -> 43% of the attention GPU time (same").size(), 1u)
      << join(same.golden_lines, "\n");

  RunResult swapped = run({10.5});
  swapped.kernel_families = kernel_set({mma_swapped_for_vec(recorded_tally("fa_on.verbose")), mma_swapped_for_vec(recorded_tally("fa_on.quiet"))});
  compare_goldens({path("golden")}, swapped);
  ASSERT_EQ(swapped.failures.size(), 1u) << join(swapped.failures, "\n");
  EXPECT_THAT(swapped.failures[0], HasSubstr("KERNEL SWAP: fattn-mma kernels replaced by fattn-vec kernels: share 43% -> 0% / 29% -> 73% "
                                             "(attention kernel set of " + path("golden/m1/chat.json")));
  EXPECT_THAT(swapped.failures[0], HasSubstr("keep it with `flashproof accept " + path("results/run") + "`"));

  // Accepted (the golden re-recorded from a run of the new kernel set), the same swap passes.
  RunResult accepted = run({10, 11, 10.5});
  accepted.kernel_families = swapped.kernel_families;
  auto previous = load_golden(path("golden/m1/chat.json"));
  ASSERT_TRUE(previous.ok());
  ASSERT_TRUE(record_golden(golden_paths(path("golden"), "m1", "chat"), accepted, &*previous).ok());
  RunResult again = run({10.5});
  again.kernel_families = swapped.kernel_families;
  compare_goldens({path("golden")}, again);
  EXPECT_THAT(again.failures, IsEmpty());
}

TEST_F(GoldenCheck, GoldenWithoutKernelSetStillCompares) {
  // A schema-2 golden (before kernel sets were kept): figures compare, the kernel set is only reported.
  fs::create_directories(path("golden/m1"));
  ASSERT_TRUE(write_file_atomic(path("golden/m1/chat.json"),
                                R"({"schema_version": 2, "fingerprint": "m1", "spread_kind": "mad_of_launch_medians", "figures": {
                                   "ttft_ms_p95": {"median": 10, "spread": 0.2, "n": 5, "direction": "lower_is_better", "gate": true}}})")
                  .ok());
  RunResult r = run({10.1});
  r.kernel_families = kernel_set({recorded_tally("fa_on.quiet")});
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;  // records the missing answers only: the thresholds exist
  compare_goldens(o, r);
  EXPECT_THAT(r.failures, IsEmpty());
  EXPECT_EQ(lines_with(r.golden_lines, "kernels: the golden holds no attention kernel set").size(), 1u) << join(r.golden_lines, "\n");
}

TEST_F(GoldenCheck, EvidenceLostAgainstTheGoldenNamesTheLevel) {
  GoldenCheckOptions setup{path("g")};
  setup.record_missing_answers = true;
  RunResult first = run({10});
  first.verdict.levels_used = {"log", "placement", "kernels"};
  compare_goldens(setup, first);
  ASSERT_THAT(first.failures, IsEmpty());
  auto recorded = load_recorded_verdict(path("g/m1/chat/verdict.json"));
  ASSERT_TRUE(recorded.ok());
  EXPECT_TRUE(recorded->levels_known);
  EXPECT_THAT(recorded->levels_used, ::testing::ElementsAre("log", "placement", "kernels"));

  RunResult silent = run({10});
  silent.verdict.levels_used = {"log", "placement"};
  silent.verdict.levels_unavailable = {"level 3 kernels: no tally given (no GPU: NVML lists none)"};
  compare_goldens(setup, silent);
  ASSERT_EQ(silent.failures.size(), 1u) << join(silent.failures, "\n");
  EXPECT_EQ(silent.failures[0], "EVIDENCE LOST: level 3 (kernels) gave evidence when the golden was recorded (" +
                                    path("g/m1/chat/verdict.json") + ") and none in this run: no tally given (no GPU: NVML lists none); "
                                    "if that is intended, keep it with `flashproof accept " + path("results/run") + "`");
  // A verdict file of an older version names no levels: nothing can be lost against it.
  ASSERT_TRUE(write_file_atomic(path("g/m1/chat/verdict.json"), R"({"state": "active", "backend": "CPU 30"})").ok());
  RunResult old = run({10});
  compare_goldens(setup, old);
  EXPECT_THAT(old.failures, IsEmpty());
}

TEST_F(GoldenCheck, OldSchemaGoldenIsUnreadableWithAdviceAndUntouched) {
  const std::string v1 = R"({"schema_version": 1, "fingerprint": "m1", "spread_kind": "mad", "figures": {}})";
  fs::create_directories(path("golden/m1"));
  ASSERT_TRUE(write_file_atomic(path("golden/m1/chat.json"), v1).ok());
  GoldenCheckOptions o{path("golden")};
  o.record_missing = true;
  RunResult r = run({10, 11, 12});
  compare_goldens(o, r);
  EXPECT_EQ(r.golden_status, "unreadable");
  ASSERT_FALSE(r.failures.empty());
  EXPECT_THAT(r.failures[0], HasSubstr("golden unreadable (left untouched): " + path("golden/m1/chat.json") +
                                       ": schema_version: 1 is a golden of the old scheme"));
  EXPECT_THAT(r.failures[0], HasSubstr("--record-missing"));
  EXPECT_EQ(*read_file(path("golden/m1/chat.json")), v1);
}

TEST_F(GoldenCheck, PoliciesTakeTheCaseMinimumEffectOrTheDefault) {
  RunResult r = run({10});
  r.figures[0].min_effect = MinEffect{kNoValue, 0};  // a result file from before minimum effects
  FigureResult rate;
  rate.name = "decode_tokens_per_s";
  rate.lower_is_better = false;
  rate.min_effect = MinEffect{0.1, 0};
  rate.guard = MinEffect{0.25, 0};
  r.figures.push_back(rate);
  auto p = figure_policies(r.figures);
  EXPECT_DOUBLE_EQ(p.at("ttft_ms_p95").min_effect.relative, kDefaultMinEffect);
  EXPECT_DOUBLE_EQ(p.at("ttft_ms_p95").min_effect.floor, 1.0);  // the default floor of a TTFT
  EXPECT_TRUE(p.at("ttft_ms_p95").gate);
  EXPECT_DOUBLE_EQ(p.at("decode_tokens_per_s").min_effect.relative, 0.1);
  EXPECT_EQ(p.at("decode_tokens_per_s").direction, Direction::higher_is_better);
  const auto m = measured_figures(r.figures);
  EXPECT_DOUBLE_EQ(m[0].min_effect.relative, kDefaultMinEffect);
  EXPECT_FALSE(m[0].guard.has_value());  // a gated figure is never also a guard
  ASSERT_TRUE(m[1].guard.has_value());
  EXPECT_DOUBLE_EQ(m[1].guard->relative, 0.25);
}

}  // namespace
}  // namespace fp
