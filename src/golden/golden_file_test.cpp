#include "golden/golden_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed on success and kept (path printed) on failure.
class GoldenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fp_golden_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure())
      std::cerr << "test files kept in " << dir_ << "\n";
    else
      fs::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

Golden sample_golden() {
  Golden g;
  g.fingerprint = "h200-sm90-driver570-abc123";
  g.figures["ttft_ms_p95"] = {41.5, 1.25, 5, Direction::lower_is_better, true, BandSource::launches};
  g.figures["tokens_per_s_median"] = {812.375, 6.5, 5, Direction::higher_is_better, false, BandSource::rounds};
  g.kernel_families["fattn-mma"] = {true, 0.4375, 0.0025, 6};
  g.kernel_families["fattn-vec"] = {true, 0.25, 0.0, 6};
  return g;
}

const char* const kSampleJson = R"({
  "schema_version": 4,
  "fingerprint": "h200-sm90-driver570-abc123",
  "spread_kind": "mad_of_launch_medians",
  "figures": {
    "tokens_per_s_median": {
      "median": 812.375,
      "spread": 6.5,
      "n": 5,
      "direction": "higher_is_better",
      "gate": false,
      "band_source": "rounds"
    },
    "ttft_ms_p95": {
      "median": 41.5,
      "spread": 1.25,
      "n": 5,
      "direction": "lower_is_better",
      "gate": true,
      "band_source": "launches"
    }
  },
  "kernel_families": {
    "fattn-mma": {
      "fused": true,
      "share_median": 0.4375,
      "share_spread": 0.0025,
      "n": 6
    },
    "fattn-vec": {
      "fused": true,
      "share_median": 0.25,
      "share_spread": 0.0,
      "n": 6
    }
  }
}
)";

// A golden of schema 3 (before band sources): it loads, every band from launches.
const char* const kVersion3Json = R"({
  "schema_version": 3,
  "fingerprint": "h200-sm90-driver570-abc123",
  "spread_kind": "mad_of_launch_medians",
  "figures": {
    "ttft_ms_p95": {"median": 41.5, "spread": 1.25, "n": 5, "direction": "lower_is_better", "gate": true}
  },
  "kernel_families": {}
}
)";

// A golden of schema 2 (before kernel sets were kept): it still loads, with no kernel set.
const char* const kVersion2Json = R"({
  "schema_version": 2,
  "fingerprint": "h200-sm90-driver570-abc123",
  "spread_kind": "mad_of_launch_medians",
  "figures": {
    "ttft_ms_p95": {"median": 41.5, "spread": 1.25, "n": 5, "direction": "lower_is_better", "gate": true}
  }
}
)";

// A golden of schema 1 (one launch's samples, fixed tolerances), as the committed ones were.
const char* const kVersion1Json = R"({
  "schema_version": 1,
  "fingerprint": "h200-sm90-driver570-abc123",
  "spread_kind": "mad",
  "figures": {
    "ttft_ms_p95": {"median": 41.5, "spread": 1.25, "n": 9, "direction": "lower_is_better",
                    "tolerance_rel": 0.5, "tolerance_abs": 2.0, "gate": true}
  }
}
)";

TEST_F(GoldenFileTest, OutputIsStableAndSorted) {
  EXPECT_EQ(golden_to_json(sample_golden()), kSampleJson);
}

TEST_F(GoldenFileTest, RoundTrip) {
  Golden g = sample_golden();
  g.figures["kv_cache_mib"] = {0.1 + 0.2, 0.0, 1, Direction::lower_is_better, true};
  ASSERT_TRUE(save_golden_atomic(path("g.json"), g).ok());
  auto back = load_golden(path("g.json"));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->fingerprint, g.fingerprint);
  ASSERT_EQ(back->figures.size(), 3u);
  for (const auto& [name, f] : g.figures) {
    SCOPED_TRACE(name);
    const GoldenFigure& b = back->figures.at(name);
    EXPECT_EQ(b.median, f.median);  // exact: doubles survive the text round trip
    EXPECT_EQ(b.spread, f.spread);
    EXPECT_EQ(b.n, f.n);
    EXPECT_EQ(b.direction, f.direction);
    EXPECT_EQ(b.gate, f.gate);
    EXPECT_EQ(b.band_source, f.band_source);
  }
  ASSERT_EQ(back->kernel_families.size(), 2u);
  EXPECT_EQ(back->kernel_families.at("fattn-mma").share_median, 0.4375);
  EXPECT_EQ(back->kernel_families.at("fattn-mma").share_spread, 0.0025);
  EXPECT_EQ(back->kernel_families.at("fattn-mma").n, 6u);
  EXPECT_TRUE(back->kernel_families.at("fattn-vec").fused);
  // Saving what was loaded gives the same bytes.
  ASSERT_TRUE(save_golden_atomic(path("g2.json"), *back).ok());
  EXPECT_EQ(*read_file(path("g.json")), *read_file(path("g2.json")));
}

TEST_F(GoldenFileTest, TruncatedFileIsAnErrorNamingTheFile) {
  std::string text = kSampleJson;
  ASSERT_TRUE(write_file_atomic(path("t.json"), text.substr(0, text.size() / 2)).ok());
  auto r = load_golden(path("t.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(path("t.json")), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("not valid JSON"), std::string::npos) << r.error().message;
}

TEST_F(GoldenFileTest, EmptyAndGarbageFilesAreErrors) {
  ASSERT_TRUE(write_file_atomic(path("e.json"), "").ok());
  EXPECT_FALSE(load_golden(path("e.json")).ok());
  ASSERT_TRUE(write_file_atomic(path("b.json"), std::string("\x00\x01\xff garbage", 12)).ok());
  auto r = load_golden(path("b.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(path("b.json")), std::string::npos);
  EXPECT_FALSE(load_golden(path("absent.json")).ok());
}

// Replaces the first occurrence of `from` in the sample and expects an error naming `field`.
void expect_schema_error(const std::string& from, const std::string& to, const std::string& mentions) {
  std::string text = kSampleJson;
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  auto r = parse_golden(text, "golden/h200/case.json");
  ASSERT_FALSE(r.ok()) << "accepted: " << to;
  EXPECT_NE(r.error().message.find("golden/h200/case.json"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(mentions), std::string::npos) << r.error().message;
}

TEST_F(GoldenFileTest, SchemaViolationsNameFieldAndValue) {
  expect_schema_error("\"schema_version\": 4", "\"schema_version\": 5", "schema_version: 5 is invalid: expected 2, 3 or 4");
  expect_schema_error("\"band_source\": \"rounds\"", "\"band_source\": \"sittings\"",
                      "figures.tokens_per_s_median.band_source: \"sittings\" is invalid: expected \"launches\", \"launches-widened\", \"rounds\" or \"nights\"");
  expect_schema_error(",\n      \"band_source\": \"rounds\"", "", "figures.tokens_per_s_median: missing required key \"band_source\"");
  expect_schema_error(",\n  \"kernel_families\": {", ",\n  \"kernel_familes\": {", "missing required key \"kernel_families\"");
  expect_schema_error("\"share_median\": 0.4375", "\"share_median\": 1.5", "kernel_families.fattn-mma.share_median: 1.5 is invalid");
  expect_schema_error("\"share_spread\": 0.0025", "\"share_spread\": -1", "kernel_families.fattn-mma.share_spread: -1");
  expect_schema_error("\"fused\": true", "\"fused\": 1", "kernel_families.fattn-mma.fused: 1 is invalid: expected true or false");
  expect_schema_error("\"n\": 6", "\"n\": 0", "kernel_families.fattn-mma.n: 0");
  expect_schema_error("\"fattn-mma\": {", "\"fattn mma\": {", "family names of letters");
  expect_schema_error("\"fingerprint\": \"h200-sm90-driver570-abc123\"", "\"fingerprint\": \"\"", "fingerprint");
  expect_schema_error("\"spread_kind\": \"mad_of_launch_medians\"", "\"spread_kind\": \"mad\"",
                      "spread_kind: \"mad\" is invalid: expected \"mad_of_launch_medians\"");
  expect_schema_error("\"median\": 812.375", "\"median\": \"fast\"",
                      "figures.tokens_per_s_median.median: \"fast\" is invalid");
  expect_schema_error("\"spread\": 6.5", "\"spread\": -6.5", "figures.tokens_per_s_median.spread: -6.5");
  expect_schema_error("\"n\": 5", "\"n\": 0", "figures.tokens_per_s_median.n: 0");
  expect_schema_error("\"n\": 5", "\"n\": 5.5", "figures.tokens_per_s_median.n: 5.5");
  expect_schema_error("\"direction\": \"higher_is_better\"", "\"direction\": \"up\"",
                      "direction: \"up\" is invalid: expected \"lower_is_better\" or \"higher_is_better\"");
  expect_schema_error("\"spread\": 6.5", "\"spread\": null", "figures.tokens_per_s_median.spread: null");
  expect_schema_error("\"gate\": false", "\"gate\": \"no\"", "gate: \"no\"");
  expect_schema_error("\"gate\": false", "\"gaet\": false", "missing required key \"gate\"");
  // A schema 2 figure with the old tolerance keys: rejected by name, never silently ignored.
  expect_schema_error("\"gate\": false", "\"gate\": false, \"tolerance_rel\": 0.5", "unknown key \"tolerance_rel\"");
  expect_schema_error("\"gate\": false", "\"gate\": false, \"extra\": 1", "unknown key \"extra\"");
  expect_schema_error("\"figures\": {", "\"figures\": {}, \"x\": {", "unknown key \"x\"");
  expect_schema_error("\"median\": 812.375", "\"median\": 1e400", "1e400");
  expect_schema_error("\"tokens_per_s_median\": {", "\"bad name!\": {", "\"bad name!\"");
}

TEST_F(GoldenFileTest, EmptyFiguresIsAnError) {
  auto r = parse_golden(R"({"schema_version":4,"fingerprint":"x","spread_kind":"mad_of_launch_medians","figures":{},"kernel_families":{}})", "f.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("f.json: figures"), std::string::npos) << r.error().message;
}

TEST_F(GoldenFileTest, Version3LoadsWithBandsFromLaunchesAndIsWrittenAsVersion4) {
  auto g = parse_golden(kVersion3Json, "v3.json");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->schema_version, 3);
  EXPECT_EQ(g->figures.at("ttft_ms_p95").band_source, BandSource::launches);
  const std::string v4 = golden_to_json(*g);
  EXPECT_NE(v4.find("\"schema_version\": 4"), std::string::npos) << v4;
  EXPECT_NE(v4.find("\"band_source\": \"launches\""), std::string::npos) << v4;
  // Version 3 never held band_source: the key there is unknown, not silently read.
  std::string bad = kVersion3Json;
  bad.replace(bad.find("\"gate\": true"), 12, "\"gate\": true, \"band_source\": \"nights\"");
  auto r = parse_golden(bad, "v3.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown key \"band_source\""), std::string::npos) << r.error().message;
}

TEST_F(GoldenFileTest, Version2LoadsWithoutAKernelSetAndIsWrittenAsVersion4) {
  auto g = parse_golden(kVersion2Json, "v2.json");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->schema_version, 2);
  EXPECT_TRUE(g->kernel_families.empty());
  EXPECT_EQ(g->figures.at("ttft_ms_p95").n, 5u);
  const std::string v3 = golden_to_json(*g);
  EXPECT_NE(v3.find("\"schema_version\": 4"), std::string::npos) << v3;
  EXPECT_NE(v3.find("\"kernel_families\": {}"), std::string::npos) << v3;
  // Version 2 never held kernel_families: the key there is unknown, not silently read.
  std::string bad = kVersion2Json;
  bad.insert(bad.rfind('}'), ", \"kernel_families\": {}");
  auto r = parse_golden(bad, "v2.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown key \"kernel_families\""), std::string::npos) << r.error().message;
}

TEST_F(GoldenFileTest, Version1IsRejectedSayingHowToRerecord) {
  ASSERT_TRUE(write_file_atomic(path("v1.json"), kVersion1Json).ok());
  auto r = load_golden(path("v1.json"));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_NE(m.find(path("v1.json") + ": schema_version: 1 is a golden of the old scheme"), std::string::npos) << m;
  EXPECT_NE(m.find("flashproof run CASE --record-missing"), std::string::npos) << m;
  EXPECT_NE(m.find("flashproof run CASE --launches 5"), std::string::npos) << m;
  EXPECT_NE(m.find("flashproof accept RUNDIR"), std::string::npos) << m;
}

TEST_F(GoldenFileTest, SaveRefusesInvalidGoldenAndWritesNothing) {
  Golden g = sample_golden();
  g.figures["ttft_ms_p95"].median = std::numeric_limits<double>::quiet_NaN();
  Status s = save_golden_atomic(path("nan.json"), g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("figures.ttft_ms_p95.median"), std::string::npos) << s.error().message;
  EXPECT_FALSE(fs::exists(path("nan.json")));
  g = sample_golden();
  g.figures["ttft_ms_p95"].n = 0;
  EXPECT_FALSE(save_golden_atomic(path("n0.json"), g).ok());
}

}  // namespace
}  // namespace fp
