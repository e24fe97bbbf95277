#include "report/result_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "util/text.h"

namespace fp {
namespace {

using ::testing::HasSubstr;

RunResult sample() {
  RunResult r;
  r.case_name = "c1";
  r.case_file = "cases/c1.json";
  r.job = "chat";
  r.runtime = "llama-server";
  r.runtime_version = "0.7.0 (build 11669, commit Debian)";
  r.runtime_build = "11669";
  r.fingerprint_id = "cpu-2c-llama-server-11669";
  r.model_sha256 = "ab";
  r.flag_value = "on";
  r.timed_argv = {"/bin/llama-server", "-m", "a model.gguf"};
  r.verdict.activity = Activity::Active;
  r.verdict.as_expected = true;
  FigureResult f;
  f.name = "ttft_ms";
  f.samples = {3, 1, 2};
  f.summary = summarize(f.samples);
  f.gate = true;
  r.figures.push_back(f);
  r.answers.push_back({"p1", "hello \"world\"\n", true, "identical", ""});
  r.kv_cache_mib = 1.0;
  r.complete = true;
  return r;
}

TEST(ResultFile, TextHasOneFigurePerLineWithUnitsAndTheLaunchCommandOnTop) {
  const std::string t = result_to_text(sample());
  EXPECT_THAT(t, HasSubstr("runtime.version = 0.7.0 (build 11669, commit Debian)\n"));
  EXPECT_THAT(t, HasSubstr("launch.timed = /bin/llama-server -m \"a model.gguf\"\n"));
  EXPECT_THAT(t, HasSubstr("figure.ttft_ms.p50 = 2.000\n"));
  EXPECT_THAT(t, HasSubstr("figure.ttft_ms.n = 3\n"));
  EXPECT_THAT(t, HasSubstr("answer.p1.text = \"hello \\\"world\\\"\\n\"\n"));
  EXPECT_THAT(t, HasSubstr("memory.host_peak_rss_mib = not measured\n"));
  EXPECT_THAT(t, HasSubstr("status = pass\n"));
  EXPECT_LT(t.find("launch.timed"), t.find("figure."));
}

TEST(ResultFile, ProbedCheckAndKvTokensAreReported) {
  RunResult r = sample();
  EXPECT_THAT(result_to_text(r), HasSubstr("signals.probed_check = not run\n"));
  EXPECT_EQ(result_to_text(r).find("memory.kv_cache_tokens"), std::string::npos);  // only when the runtime states it
  r.probed_check = "attention kernels identical to the evidence pass (fused: k<1>; unfused: none)";
  r.kv_cache_tokens = 127472;
  EXPECT_THAT(result_to_text(r), HasSubstr("signals.probed_check = attention kernels identical to the evidence pass (fused: k<1>; unfused: none)\n"));
  EXPECT_THAT(result_to_text(r), HasSubstr("memory.kv_cache_tokens = 127472\n"));
  const std::string dir = ::testing::TempDir() + "/probed";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_result_files(dir, r).ok());
  auto back = load_result_json(dir + "/result.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->probed_check, r.probed_check);
}

TEST(ResultFile, SameRunSameText) { EXPECT_EQ(result_to_text(sample()), result_to_text(sample())); }

// Two runs of a case, however named and wherever the checkout is, print the same launch lines and
// paths; result.json keeps what they stood for.
TEST(ResultFile, TextShowsPlaceholdersAndJsonTheResolvedValues) {
  RunResult r = sample();
  r.suite_root = "/srv/suite";
  r.output_dir = "/srv/suite/results/id/c1/20261130T000000Z-1";
  r.case_file = "/srv/suite/cases/c1.json";
  r.model_path = "models/m.gguf";
  r.model_file = "/srv/suite/models/m.gguf";
  r.timed_argv = {"/bin/llama-server", "-m", "/srv/suite/models/m.gguf", "--port", "41234"};
  r.timed_line = {"/bin/llama-server", "-m", "models/m.gguf", "--port", "{port}"};
  r.evidence_env = {{"FLASHPROOF_KERNEL_TALLY", r.output_dir + "/kernels.tsv"}};
  r.golden_dir = "/srv/suite/build/golden-ci/id";
  r.failures = {"no golden: /srv/suite/golden/id/c1.json does not exist"};
  const std::string t = result_to_text(r);
  EXPECT_THAT(t, HasSubstr("case.file = {suite}/cases/c1.json\n"));
  EXPECT_THAT(t, HasSubstr("model.path = models/m.gguf\n"));
  EXPECT_THAT(t, HasSubstr("launch.timed = /bin/llama-server -m models/m.gguf --port {port}\n"));
  EXPECT_THAT(t, HasSubstr("launch.evidence.env.FLASHPROOF_KERNEL_TALLY = {run}/kernels.tsv\n"));
  EXPECT_THAT(t, HasSubstr("golden.dir = {suite}/build/golden-ci/id\n"));
  EXPECT_THAT(t, HasSubstr("failure.1 = no golden: {suite}/golden/id/c1.json does not exist\n"));
  EXPECT_EQ(t.find("/srv/suite"), std::string::npos) << t;
  EXPECT_EQ(t.find("41234"), std::string::npos) << t;
  const auto j = result_to_json(r);
  EXPECT_EQ(j["suite"], "/srv/suite");
  EXPECT_EQ(j["case_file"], "/srv/suite/cases/c1.json");
  EXPECT_EQ(j["model"]["file"], "/srv/suite/models/m.gguf");
  EXPECT_EQ(j["launch"]["timed_argv"][4], "41234");
  EXPECT_EQ(j["launch"]["timed_line"][4], "{port}");
}

TEST(ResultFile, JsonRoundTripKeepsWhatAcceptNeeds) {
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(write_result_files(dir, sample()).ok());
  auto r = load_result_json(dir + "/result.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->case_name, "c1");
  EXPECT_EQ(r->fingerprint_id, "cpu-2c-llama-server-11669");
  ASSERT_EQ(r->figures.size(), 1u);
  EXPECT_EQ(r->figures[0].samples, (std::vector<double>{3, 1, 2}));
  EXPECT_TRUE(r->figures[0].gate);
  ASSERT_EQ(r->answers.size(), 1u);
  EXPECT_EQ(r->answers[0].text, "hello \"world\"\n");
  EXPECT_TRUE(r->complete);
}

TEST(ResultFile, KernelSetLevelsAndLoadRoundTrip) {
  RunResult r = sample();
  r.verdict.levels_used = {"log", "placement", "kernels"};
  r.verdict.levels_unavailable = {};
  r.evidence_load = "4 requests at once (the batch job's round)";
  r.kernel_launches = {"evidence pass", "probed check"};
  r.kernel_families = {{"fattn-mma", true, {0.435, 0.434}}, {"soft_max", false, {0.0, 0.01}}};
  const std::string text = result_to_text(r);
  EXPECT_THAT(text, HasSubstr("kernels.families = fattn-mma 43%, soft_max 0.5% of the attention GPU time (median over evidence "
                              "pass, probed check)\n"));
  EXPECT_THAT(text, HasSubstr("kernels.family.fattn-mma = 0.435 0.434\n"));
  EXPECT_THAT(text, HasSubstr("kernels.family.soft_max.unfused = 0.000 0.010\n"));
  EXPECT_THAT(text, HasSubstr("signals.evidence_load = 4 requests at once (the batch job's round)\n"));
  const std::string dir = ::testing::TempDir() + "/fp-result-kernels";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_result_files(dir, r).ok());
  auto back = load_result_json(dir + "/result.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->verdict.levels_used, r.verdict.levels_used);  // accept writes them into the golden's verdict
  EXPECT_EQ(back->evidence_load, r.evidence_load);
  EXPECT_EQ(back->kernel_launches, r.kernel_launches);
  ASSERT_EQ(back->kernel_families.size(), 2u);
  EXPECT_EQ(back->kernel_families[1].family, "soft_max");
  EXPECT_FALSE(back->kernel_families[1].fused);
  EXPECT_EQ(back->kernel_families[0].shares, (std::vector<double>{0.435, 0.434}));
  // A run without the probe says so.
  EXPECT_THAT(result_to_text(sample()), HasSubstr("kernels.families = not recorded (no kernel probe)\n"));
}

TEST(ResultFile, AttachedRunSaysColdStartIsNotMeasuredAndWhereTheLogCameFrom) {
  RunResult r = sample();
  r.attached = "http://127.0.0.1:8080";
  r.attached_log = "log file /var/log/llama.log";
  r.attached_notes = {"read 10 bytes"};
  const std::string t = result_to_text(r);
  EXPECT_THAT(t, HasSubstr("attach.endpoint = http://127.0.0.1:8080\n"));
  EXPECT_THAT(t, HasSubstr("attach.log = log file /var/log/llama.log\n"));
  EXPECT_THAT(t, HasSubstr("cold.ready_ms = not measured: attached\n"));
  EXPECT_THAT(t, HasSubstr("cold.first_request_ttft_ms = not measured: attached\n"));
  const std::string dir = ::testing::TempDir() + "/attached-result";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(write_result_files(dir, r).ok());
  auto back = load_result_json(dir + "/result.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->attached, "http://127.0.0.1:8080");
  EXPECT_EQ(back->attached_notes, std::vector<std::string>{"read 10 bytes"});
}

TEST(ResultFile, IncompleteRunSaysSo) {
  RunResult r = sample();
  r.complete = false;
  EXPECT_THAT(result_to_text(r), HasSubstr("status = incomplete\n"));
}

TEST(ResultFile, TextThatIsNotUtf8IsWrittenAsReplacementsAndTheBytesAreSaid) {
  // A quote that escaped util/utf8.h (the issue: result.txt said pass, result.json never came).
  const std::string dir = ::testing::TempDir() + "/fp-result-not-utf8";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunResult r = sample();
  r.output_dir = dir;
  r.verdict.quotes = {"llama_context\xFB: flash_attn = enabled"};
  r.not_utf8 = {{dir + "/evidence.log", 20000000}};
  ASSERT_TRUE(write_result_files(dir, r));
  auto back = load_result_json(dir + "/result.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->status(), "pass");
  auto text = read_file(dir + "/result.txt");
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr("verdict.quote.1 = llama_context\xEF\xBF\xBD: flash_attn = enabled\n"));
  EXPECT_THAT(*text, HasSubstr("not_utf8.1 = {run}/evidence.log: 20000000 bytes that are not UTF-8, shown as U+FFFD\n"));
  auto json = read_file(dir + "/result.json");
  EXPECT_THAT(*json, HasSubstr("\"not_utf8\": {\n    \"" + dir + "/evidence.log\": 20000000"));
  std::filesystem::remove_all(dir);
}

TEST(ResultFile, BothFilesOrNeither) {
  // result.txt cannot be written (a folder holds its name): result.json is taken away again.
  const std::string dir = ::testing::TempDir() + "/fp-result-both-or-neither";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/result.txt/x");
  auto st = write_result_files(dir, sample());
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr(dir + "/result.txt: rename failed: Is a directory"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/result.json"));
  std::filesystem::remove_all(dir);
}

TEST(ResultFile, TruncatedJsonIsAnErrorNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/truncated-result.json";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("{\"case\": \"c1\", \"job\"", f);
  std::fclose(f);
  auto r = load_result_json(path);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("truncated-result.json"));
}

}  // namespace
}  // namespace fp
