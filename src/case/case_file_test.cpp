#include "case/case_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fp {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A scratch repository with a model, a prompt set and a document, and a valid case to break.
class CaseFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("fp-case-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "fixtures/prompts/chat");
    fs::create_directories(root_ / "fixtures/prompts/documents");
    fs::create_directories(root_ / "models");
    fs::create_directories(root_ / "cases");
    std::ofstream(root_ / "fixtures/prompts/chat/hello.txt") << "hi\n";
    std::ofstream(root_ / "fixtures/prompts/documents/doc.txt") << "a b c\n";
    std::ofstream(root_ / "models/m.gguf") << "GGUF";
    std::ofstream(root_ / kSuiteMarker) << suite_marker_text("fixtures/prompts");
    good_ = json::parse(R"({
      "name": "c1", "job": "chat", "runtime": "llama-server",
      "model": {"path": "models/m.gguf", "sha256": "0000000000000000000000000000000000000000000000000000000000000000"},
      "shape": {"context": 2048, "prompt_set": "chat", "max_output_tokens": 8},
      "launch": {"argv": ["{runtime}", "-m", "{model}", "--port", "{port}", "-fa", "{flag}"]},
      "flag": {"on": "on", "off": "off", "use": "on"},
      "expect": {"fused_attention": true, "backend": "CPU"},
      "plan": {"warmup": 1, "repetitions": 3, "timeout_s": 120}
    })");
  }
  void TearDown() override { fs::remove_all(root_); }

  Result<Case> load(const json& j, const std::string& name = "c1") {
    path_ = (root_ / "cases" / (name + ".json")).string();
    std::ofstream(path_) << j.dump(2);
    return load_case(path_, suite());
  }
  Suite suite() const {
    auto s = load_suite(root_.string());
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? *s : Suite{};
  }
  std::string error_of(const json& j) {
    auto r = load(j);
    EXPECT_FALSE(r.ok()) << "expected an error for " << j.dump();
    return r.ok() ? "" : r.error().message;
  }

  fs::path root_;
  std::string path_;
  json good_;
};

TEST_F(CaseFileTest, LoadsAValidCase) {
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->name, "c1");
  EXPECT_EQ(c->job, Job::Chat);
  EXPECT_EQ(c->shape.context, 2048);
  EXPECT_EQ(c->flag.used(), "on");
  EXPECT_EQ(c->plan.repetitions, 3);
  EXPECT_EQ(c->expect.backend, "CPU");
  EXPECT_FALSE(c->self_test);
}

TEST_F(CaseFileTest, UnknownKeyNamesFileFieldAndValidOnes) {
  good_["shape"]["ctx"] = 5;
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("c1.json"), HasSubstr("unknown field \"shape.ctx\""), HasSubstr("context")));
}

TEST_F(CaseFileTest, WrongTypeNamesFieldValueAndExpectation) {
  good_["shape"]["context"] = "2048";
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("field \"shape.context\" = \"2048\""), HasSubstr("is a string"),
                                     HasSubstr("whole number from 128")));
}

TEST_F(CaseFileTest, AKeyGivenTwiceIsAnErrorNamingIt) {
  // JSON parsers keep the last of two keys without a word: the first "repetitions" would be ignored.
  std::string text = good_.dump(2);
  text.replace(text.find("\"plan\": {"), 9, "\"plan\": {\"repetitions\": 9, ");
  auto c = parse_case_text(text, (root_ / "cases/c1.json").string(), suite());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, AllOf(HasSubstr("c1.json: field \"plan.repetitions\" is given twice"), HasSubstr("keep one")));
  // In a nested object, and at the top.
  text = good_.dump();
  text.replace(text.find("{\"argv\""), 1, "{\"argv\": [], ");
  EXPECT_THAT(parse_case_text(text, "c1.json", suite()).error().message, HasSubstr("field \"launch.argv\" is given twice"));
  text = good_.dump();
  text.replace(0, 1, "{\"job\": \"batch\", ");
  EXPECT_THAT(parse_case_text(text, "c1.json", suite()).error().message, HasSubstr("field \"job\" is given twice"));
}

TEST_F(CaseFileTest, ExpectDegradedIsTrueOrFalseForFusedAttentionExpectedActive) {
  EXPECT_FALSE(load(good_)->expect.degraded.has_value());
  good_["expect"]["degraded"] = false;
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->expect.degraded, std::optional<bool>(false));
  good_["expect"]["degraded"] = "no";
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("c1.json"), HasSubstr("expect.degraded"), HasSubstr("\"no\" is not true or false"),
                                     HasSubstr("false: the fused path must run on the cache's own K/V types")));
  good_["expect"]["degraded"] = false;
  good_["expect"]["fused_attention"] = false;
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("expect.degraded"), HasSubstr("fused attention expected active only")));
}

TEST_F(CaseFileTest, OutOfRange) {
  good_["plan"]["repetitions"] = 0;
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("plan.repetitions\" = 0"), HasSubstr("out of range")));
}

TEST_F(CaseFileTest, GatedFiguresAreTheCasesChoiceFromTheKnownNames) {
  good_["plan"]["gated"] = {"ttft_ms", "gpu_kernel_ms_per_token"};
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->plan.gated, (std::vector<std::string>{"ttft_ms", "gpu_kernel_ms_per_token"}));
  good_["plan"]["gated"] = {"ttft_ms", "gpu_ms"};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("plan.gated"), HasSubstr("unknown figure \"gpu_ms\""), HasSubstr("gpu_kernel_ms_per_token"),
                                     HasSubstr("server_prompt_ms")));
}

// Issue 41 item 3: a case written when the gate totalled kernel time per launch (gpu_kernel_ms,
// attention_kernel_ms) gates what replaced it, the golden path's per-token figures, and its minimum
// effect keeps the per-token floor, not the per-launch one (0.01 ms would be ten times a token's).
TEST_F(CaseFileTest, AKernelFigureNamedPerLaunchGatesItsPerTokenFigure) {
  good_["plan"]["gated"] = {"gpu_kernel_ms", "attention_kernel_ms"};
  good_["plan"]["min_effect"] = {{"gpu_kernel_ms", 0.02}};
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->plan.gated, (std::vector<std::string>{"gpu_kernel_ms_per_token", "attention_kernel_ms_per_token"}));
  const MinEffect e = min_effect(*c, "gpu_kernel_ms_per_token");
  EXPECT_DOUBLE_EQ(e.relative, 0.02);
  EXPECT_DOUBLE_EQ(e.floor, 1e-6);
}

// plan.min_effect: a fraction keeps the figure's default floor; an object sets both; the defaults
// (case/effect_defaults.h) apply to figures the case does not name, and a key covers the figures
// that start with it and "_" and every concurrency level.
TEST_F(CaseFileTest, MinimumEffectsAreAFractionOrAFractionWithAFloor) {
  auto plain = load(good_);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(min_effect(*plain, "ttft_ms_p95"), (MinEffect{0.05, 1.0}));
  EXPECT_EQ(min_effect(*plain, "itl_ms"), (MinEffect{0.05, 0.05}));
  EXPECT_EQ(min_effect(*plain, "decode_tokens_per_s"), (MinEffect{0.05, 0}));
  EXPECT_FALSE(case_min_effect(*plain, "ttft_ms").has_value());
  good_["plan"]["min_effect"] = {{"ttft_ms", 0.1}, {"itl_ms", {{"relative", 0.03}, {"floor", 0.2}}}, {"e2e_ms", {{"relative", 0.2}}}};
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(min_effect(*c, "ttft_ms"), (MinEffect{0.1, 1.0}));
  EXPECT_EQ(min_effect(*c, "ttft_ms_p95"), (MinEffect{0.1, 1.0}));
  EXPECT_EQ(min_effect(*c, "c4.ttft_ms_p95"), (MinEffect{0.1, 1.0}));
  EXPECT_EQ(min_effect(*c, "itl_ms"), (MinEffect{0.03, 0.2}));
  EXPECT_EQ(min_effect(*c, "e2e_ms"), (MinEffect{0.2, 1.0}));
}

TEST_F(CaseFileTest, MinimumEffectErrorsNameTheFieldTheValueAndWhatIsValid) {
  good_["plan"]["min_effect"] = {{"ttft_ms", {{"relative", 0.05}, {"floor", -1}}}};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("c1.json"), HasSubstr("plan.min_effect.ttft_ms.floor\" = -1"), HasSubstr("out of range")));
  good_["plan"]["min_effect"] = {{"ttft_ms", {{"floor", 2}}}};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("plan.min_effect.ttft_ms"), HasSubstr("missing field \"relative\"")));
  good_["plan"]["min_effect"] = {{"ttft_ms", {{"relative", 0.05}, {"flor", 2}}}};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("unknown field \"plan.min_effect.ttft_ms.flor\""), HasSubstr("floor, relative")));
  good_["plan"]["min_effect"] = {{"ttft_ms", "5%"}};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("plan.min_effect.ttft_ms\" = \"5%\""), HasSubstr("a fraction from 0.001 to 10"),
                                     HasSubstr("\"floor\"")));
}

// plan.guards: a figure a user feels -> a fraction, {relative, floor} or false (no guard).
TEST_F(CaseFileTest, GuardsCanBeTightenedOrDropped) {
  auto plain = load(good_);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(guard_effect(*plain, "tpot_ms"), (MinEffect{0.25, 0.05}));
  EXPECT_EQ(guard_effect(*plain, "decode_tokens_per_s"), (MinEffect{0.25, 0}));
  EXPECT_FALSE(guard_effect(*plain, "server_prompt_ms").has_value());  // not a figure a user feels
  good_["plan"]["guards"] = {{"tpot_ms", 0.1}, {"itl_ms", false}, {"e2e_ms", {{"relative", 0.5}, {"floor", 10}}}};
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(guard_effect(*c, "tpot_ms"), (MinEffect{0.1, 0.05}));
  EXPECT_FALSE(guard_effect(*c, "itl_ms").has_value());
  EXPECT_EQ(guard_effect(*c, "e2e_ms"), (MinEffect{0.5, 10}));
  good_["plan"]["guards"] = {{"server_prompt_ms", 0.1}};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("plan.guards.server_prompt_ms"), HasSubstr("not a figure a user feels"), HasSubstr("tpot_ms")));
  good_["plan"]["guards"] = {{"tpot_ms", true}};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("plan.guards.tpot_ms\" = true"), HasSubstr("expected false (no guard)")));
}

TEST_F(CaseFileTest, BadJob) {
  good_["job"] = "summarise";
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("\"job\" = \"summarise\""), HasSubstr("chat, completion, extraction, batch")));
}

TEST_F(CaseFileTest, MissingModelSaysHowToGenerateIt) {
  good_["model"]["path"] = "models/absent.gguf";
  good_["model"]["recipe"] = "fixtures/prompts/chat/hello.txt";  // any existing file stands in for a recipe
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("model.path"), HasSubstr("no such file"), HasSubstr("flashproof make-model")));
}

TEST_F(CaseFileTest, PathEscapingTheSuiteIsRefused) {
  good_["model"]["path"] = "../outside.gguf";
  EXPECT_THAT(error_of(good_), HasSubstr("escapes the suite"));
  good_["model"]["path"] = "models/m.gguf";
  good_["shape"]["long_prompt"] = {{"document", "/etc/passwd"}, {"chars", 10}};
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("shape.long_prompt.document"), HasSubstr("absolute path")));
}

TEST_F(CaseFileTest, BadSha) {
  good_["model"]["sha256"] = "abc";
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("model.sha256\" = \"abc\""), HasSubstr("64 lowercase hex")));
}

TEST_F(CaseFileTest, UnknownPlaceholder) {
  good_["launch"]["argv"][2] = "{modle}";
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("unknown placeholder {modle}"), HasSubstr("{model}")));
}

TEST_F(CaseFileTest, MissingRequiredPlaceholder) {
  good_["launch"]["argv"] = json::array({"{runtime}", "-m", "{model}", "-fa", "{flag}"});
  EXPECT_THAT(error_of(good_), HasSubstr("no {port} placeholder"));
}

TEST_F(CaseFileTest, UnbalancedBrace) {
  good_["launch"]["argv"].push_back("{model");
  EXPECT_THAT(error_of(good_), HasSubstr("unbalanced brace"));
}

TEST_F(CaseFileTest, ArgvMustStartWithRuntime) {
  good_["launch"]["argv"][0] = "/bin/sh";
  EXPECT_THAT(error_of(good_), HasSubstr("must start with \"{runtime}\""));
}

TEST_F(CaseFileTest, NameMustMatchTheFileSoNamesAreUnique) {
  auto r = load(good_, "other");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, AllOf(HasSubstr("other.json"), HasSubstr("must equal the file's name")));
}

TEST_F(CaseFileTest, FlagValuesMustDiffer) {
  good_["flag"]["off"] = "on";
  EXPECT_THAT(error_of(good_), HasSubstr("the two values must differ"));
}

TEST_F(CaseFileTest, MissingPromptSet) {
  good_["shape"]["prompt_set"] = "nothing";
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("shape.prompt_set"), HasSubstr("fixtures/prompts/nothing")));
}

TEST_F(CaseFileTest, NotJsonNamesTheByte) {
  path_ = (root_ / "cases/c1.json").string();
  std::ofstream(path_) << "{\"name\": ";
  auto r = load_case(path_, suite());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, AllOf(HasSubstr("c1.json"), HasSubstr("not valid JSON at byte")));
}

TEST_F(CaseFileTest, BadEnvName) {
  good_["launch"]["env"] = {{"BAD-NAME", "1"}};
  EXPECT_THAT(error_of(good_), HasSubstr("not a valid environment variable name"));
}

TEST_F(CaseFileTest, SelfTestBlockIsValidated) {
  good_["ctest"] = {{"expect_exit", 1}, {"expect_output", json::array()}};
  EXPECT_THAT(error_of(good_), HasSubstr("at least one pattern"));
  good_["ctest"]["expect_output"] = {"NOT active"};
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->self_test);
}

TEST_F(CaseFileTest, AbBlockIsOptionalWithDefaults) {
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->has_ab);
  EXPECT_EQ(c->ab.repetitions, 5);
  EXPECT_EQ(c->ab.rounds, 3);  // the plan's repetitions
  EXPECT_TRUE(c->ab.mechanism.empty());
}

TEST_F(CaseFileTest, AbBlockLoads) {
  good_["ab"] = json::parse(R"({"repetitions": 7, "rounds": 2, "warmup": 0, "sustained": {"duration_s": 1.5, "concurrency": 3},
    "mechanism": [{"figure": "prompt_tokens_per_s", "expect": "faster", "at_least": 0.1},
                  {"figure": "kv_cache_mib", "expect": "unchanged", "tolerance": 0.01, "why": "f16 KV either way"}]})");
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->has_ab);
  EXPECT_EQ(c->ab.repetitions, 7);
  EXPECT_EQ(c->ab.rounds, 2);
  EXPECT_EQ(c->ab.warmup, 0);
  EXPECT_DOUBLE_EQ(c->ab.sustained_s, 1.5);
  EXPECT_EQ(c->ab.concurrency, 3);
  ASSERT_EQ(c->ab.mechanism.size(), 2u);
  EXPECT_EQ(c->ab.mechanism[0].figure, "prompt_tokens_per_s");
  EXPECT_DOUBLE_EQ(c->ab.mechanism[0].at_least, 0.1);
  EXPECT_EQ(c->ab.mechanism[1].expect, MechanismExpect::unchanged);
  EXPECT_DOUBLE_EQ(c->ab.mechanism[1].tolerance, 0.01);
}

TEST_F(CaseFileTest, AbMechanismErrorsNameTheStatement) {
  good_["ab"] = json::parse(R"({"mechanism": [{"figure": "prompt_tps", "expect": "faster"}]})");
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("c1.json"), HasSubstr("field \"ab.mechanism[0].figure\" = \"prompt_tps\""),
                                     HasSubstr("prompt_tokens_per_s")));
  good_["ab"] = json::parse(R"({"mechanism": [{"figure": "ttft_ms", "expect": "quicker"}]})");
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("ab.mechanism[0].expect"), HasSubstr("faster, slower")));
  good_["ab"] = json::parse(R"({"mechanism": [{"figure": "ttft_ms", "expect": "unchanged", "at_least": 0.1}]})");
  EXPECT_THAT(error_of(good_), HasSubstr("\"unchanged\" takes \"tolerance\""));
  good_["ab"] = json::parse(R"({"sustained": {"duration_s": -1}})");
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("ab.sustained.duration_s"), HasSubstr("number from 0")));
  good_["ab"] = json::parse(R"({"repetitions": 0})");
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("ab.repetitions"), HasSubstr("whole number from 1")));
}

// Issue 13: expect.backend as a list or "all-gpus"; expect.evidence names the required levels.
TEST_F(CaseFileTest, ExpectBackendListAndRequiredEvidence) {
  auto one = load(good_);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->expect.backends, std::vector<std::string>({"CPU"}));
  EXPECT_TRUE(one->expect.evidence.empty());  // default: every level the platform can produce
  json j = good_;
  j["expect"] = json::parse(R"({"fused_attention": true, "backend": ["CUDA0", "CUDA1"], "evidence": ["log", "kernels"]})");
  auto two = load(j);
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->expect.backends, std::vector<std::string>({"CUDA0", "CUDA1"}));
  EXPECT_EQ(two->expect.backend, "CUDA0,CUDA1");
  EXPECT_EQ(two->expect.evidence, std::vector<std::string>({"log", "kernels"}));
  j["expect"] = json::parse(R"({"fused_attention": true, "backend": "all-gpus"})");
  auto all = load(j);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->expect.backend, "all-gpus");
  j["expect"] = json::parse(R"({"fused_attention": true, "backend": "CUDA0", "evidence": ["log", "gpu"]})");
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("expect.evidence"), HasSubstr("\"gpu\" is not an evidence level; valid: log, placement, kernels")));
  j["expect"] = json::parse(R"({"fused_attention": true, "backend": []})");
  EXPECT_THAT(error_of(j), HasSubstr("expect.backend"));
  j["expect"] = json::parse(R"({"fused_attention": true, "backend": ["CUDA 0"]})");
  EXPECT_THAT(error_of(j), HasSubstr("\"CUDA 0\": expected a backend name"));
}

// A server something else started: "attach" instead of "model", "launch" and "flag".
TEST_F(CaseFileTest, AttachedCaseLoadsWithoutModelLaunchOrFlag) {
  json j = good_;
  j.erase("model");
  j.erase("launch");
  j.erase("flag");
  j["shape"].erase("context");
  j["attach"] = json::parse(R"({"endpoint": "http://10.0.0.5:8080/", "model": "llama-3", "api_key_env": "LLAMA_KEY",
                                "log_file": "/var/log/llama.log"})");
  auto c = load(j);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->attach);
  EXPECT_EQ(c->attach->endpoint, "http://10.0.0.5:8080");
  EXPECT_EQ(c->attach->model, "llama-3");
  EXPECT_EQ(c->attach->api_key_env, "LLAMA_KEY");
  EXPECT_EQ(c->shape.context, 0) << "an attached server's context is optional";
  EXPECT_TRUE(c->launch.argv.empty());
}

TEST_F(CaseFileTest, AttachedCaseErrorsNameTheField) {
  json a = good_;
  a.erase("model");
  a.erase("flag");
  a["attach"] = json::parse(R"({"endpoint": "http://127.0.0.1:8080", "model": "m"})");
  EXPECT_THAT(error_of(a), AllOf(HasSubstr("field \"launch\""), HasSubstr("an attached case (\"attach\") starts nothing")));
  a.erase("launch");
  auto bad = [&](const char* attach, const char* expected) {
    json j = a;
    j["attach"] = json::parse(attach);
    EXPECT_THAT(error_of(j), HasSubstr(expected)) << attach;
  };
  bad(R"({"endpoint": "127.0.0.1:8080", "model": "m"})", "attach.endpoint\" = \"127.0.0.1:8080\": expected the server's base URL");
  bad(R"({"endpoint": "http://u:pw@h:1", "model": "m"})", "carries credentials");
  bad(R"({"endpoint": "http://h:1", "model": ""})", "attach.model");
  bad(R"({"endpoint": "http://h:1", "model": "m", "api_key_env": "sk-abc 123"})", "expected the name of an environment variable");
  bad(R"({"endpoint": "http://h:1", "model": "m", "log_file": "llama.log"})", "expected an absolute path");
  bad(R"({"endpoint": "http://h:1", "model": "m", "log_file": "/l", "log_command": ["tail"]})", "give log_file or log_command, not both");
  bad(R"({"endpoint": "http://h:1", "model": "m", "log_command": []})", "attach.log_command");
  json ab = a;
  ab["ab"] = json::parse(R"({"repetitions": 2})");
  EXPECT_THAT(error_of(ab), HasSubstr("cannot run A/B"));
}

TEST_F(CaseFileTest, ServedNameIsOptional) {
  json j = good_;
  j["model"]["served_name"] = "tiny";
  auto c = load(j);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->model.served_name, "tiny");
}

TEST(ShippedCases, EveryCaseInTheRepositoryLoads) {
  int n = 0;
  auto suite = load_suite(FLASHPROOF_SOURCE_DIR);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  for (const auto& e : fs::directory_iterator(suite->cases)) {
    if (e.path().extension() != ".json") continue;
    auto c = load_case(e.path().string(), *suite);
    // A missing generated model is the only acceptable failure (CTest generates them first).
    if (!c.ok()) {
      EXPECT_THAT(c.error().message, HasSubstr("flashproof make-model")) << e.path();
    }
    ++n;
  }
  EXPECT_GE(n, 3);
}

// Found by fuzz/fuzz_case: std::regex recursed once per character and overflowed the stack on a
// long argument, a long environment variable name or a long backend.
TEST_F(CaseFileTest, LongArgumentsAreCheckedWithoutRecursion) {
  const std::string huge(2 << 20, 'a');
  json j = good_;
  j["launch"]["argv"].push_back("{" + huge + "}");
  EXPECT_THAT(error_of(j), HasSubstr("unknown placeholder {aaaa"));
  j = good_;
  j["launch"]["argv"].push_back("--x=" + huge + "}");
  EXPECT_THAT(error_of(j), HasSubstr("unbalanced brace"));
  j = good_;
  j["launch"]["env"] = {{huge + "-", "1"}};
  EXPECT_THAT(error_of(j), HasSubstr("not a valid environment variable name"));
  j = good_;
  j["expect"]["backend"] = "CUDA" + huge;  // valid, only long
  auto c = load(j);
  EXPECT_TRUE(c.ok()) << c.error().message.substr(0, 200);
  j["launch"]["argv"].push_back("{x{model}");  // a brace outside a placeholder, one placeholder
  EXPECT_THAT(error_of(j), HasSubstr("unbalanced brace"));
}

TEST_F(CaseFileTest, WithoutWorkloadFieldsNothingChanges) {
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_FALSE(c->has_workload());
  EXPECT_EQ(c->shape.max_output_tokens, 8);
  EXPECT_FALSE(c->shape.exact_output);
  EXPECT_EQ(c->shape.prompt_tokens, 0);
  EXPECT_TRUE(c->plan.concurrency.empty());
  EXPECT_FALSE(c->targets.has_value());
}

TEST_F(CaseFileTest, WorkloadFieldsLoad) {
  good_["shape"] = json::parse(R"({"context": 2048, "synthetic_prompts": 3, "prompt_tokens": 512, "output_tokens": 64})");
  good_["plan"]["concurrency"] = {1, 4, 8};
  good_["plan"]["requests"] = 16;
  good_["plan"]["request_rate"] = 2.5;
  good_["targets"] = json::parse(R"({"ttft_ms": 500, "tpot_ms": 50, "gate": true})");
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->has_workload());
  EXPECT_EQ(c->shape.prompt_set, "");
  EXPECT_EQ(c->shape.synthetic_prompts, 3);
  EXPECT_EQ(c->shape.prompt_tokens, 512);
  EXPECT_EQ(c->shape.max_output_tokens, 64);
  EXPECT_TRUE(c->shape.exact_output);
  EXPECT_EQ(c->plan.concurrency, (std::vector<int>{1, 4, 8}));
  EXPECT_EQ(c->plan.requests, 16);
  EXPECT_DOUBLE_EQ(c->plan.request_rate, 2.5);
  ASSERT_TRUE(c->targets.has_value());
  EXPECT_EQ(c->targets->max_ms, (std::map<std::string, double>{{"ttft_ms", 500}, {"tpot_ms", 50}}));
  EXPECT_TRUE(c->targets->gate);
}

TEST_F(CaseFileTest, WorkloadFieldErrorsSayWhatIsValid) {
  auto with = [&](const char* section, const char* patch) {
    json j = good_;
    j[section].update(json::parse(patch));
    return error_of(j);
  };
  EXPECT_THAT(with("shape", R"({"output_tokens": 8})"), HasSubstr("\"max_output_tokens\" both given"));
  EXPECT_THAT(with("shape", R"({"synthetic_prompts": 2, "prompt_tokens": 64})"), HasSubstr("\"prompt_set\" both given"));
  json synthetic = good_;
  synthetic["shape"] = json::parse(R"({"context": 2048, "synthetic_prompts": 2, "max_output_tokens": 8})");
  EXPECT_THAT(error_of(synthetic), AllOf(HasSubstr("shape.synthetic_prompts"), HasSubstr("needs \"prompt_tokens\"")));
  EXPECT_THAT(with("shape", R"({"prompt_tokens": 2045})"),
              AllOf(HasSubstr("field \"shape.prompt_tokens\" = 2045"), HasSubstr("exceed the context (2048); expected at most 2040")));
  EXPECT_THAT(with("shape", R"({"prompt_tokens": 64, "long_prompt": {"document": "fixtures/prompts/documents/doc.txt", "chars": 9}})"),
              HasSubstr("\"long_prompt\" both given"));
  EXPECT_THAT(with("plan", R"({"concurrency": [1, 0]})"),
              AllOf(HasSubstr("field \"plan.concurrency\" = [1,0]"), HasSubstr("distinct whole numbers from 1 to 1024")));
  EXPECT_THAT(with("plan", R"({"concurrency": [2, 2]})"), HasSubstr("level 2 given twice"));
  EXPECT_THAT(with("plan", R"({"concurrency": []})"), HasSubstr("e.g. [1, 4, 8]"));
  EXPECT_THAT(with("plan", R"({"request_rate": 4})"), AllOf(HasSubstr("plan.request_rate"), HasSubstr("needs \"concurrency\"")));
  EXPECT_THAT(with("plan", R"({"concurrency": [1], "request_rate": 0})"), AllOf(HasSubstr("plan.request_rate\" = 0"), HasSubstr("expected a number")));
  json targets = good_;
  targets["targets"] = json::parse(R"({"gate": true})");
  EXPECT_THAT(error_of(targets), AllOf(HasSubstr("field \"targets\""), HasSubstr("names no target"), HasSubstr("ttft_ms, tpot_ms, e2e_ms")));
  targets["targets"] = json::parse(R"({"ttft": 500})");
  EXPECT_THAT(error_of(targets), AllOf(HasSubstr("unknown field \"targets.ttft\""), HasSubstr("ttft_ms")));
}

TEST_F(CaseFileTest, HeadroomBlockNamesTheDeployedContextAndTheNeighbours) {
  EXPECT_FALSE(load(good_)->headroom.has_value());
  good_["headroom"] = json::parse(R"({"deployed_context": 50000000, "neighbours": [
      {"name": "embedder", "mib": 6144, "match": "--port 8081"},
      {"name": "reranker", "mib": 1024.5, "device": "CUDA1", "comment": "the small one"}]})");
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->headroom.has_value());
  EXPECT_EQ(c->headroom->deployed_context, 50000000);
  ASSERT_EQ(c->headroom->neighbours.size(), 2u);
  const NeighbourServer& e = c->headroom->neighbours[0];
  EXPECT_EQ(e.name, "embedder");
  EXPECT_EQ(e.match, "--port 8081");
  EXPECT_EQ(e.device, "CPU");  // expect.backend names one device: the neighbour's by default
  EXPECT_DOUBLE_EQ(e.mib, 6144);
  EXPECT_EQ(c->headroom->neighbours[1].match, "reranker");  // no "match": the name
  EXPECT_EQ(c->headroom->neighbours[1].device, "CUDA1");
  good_["headroom"] = json::parse(R"({"neighbours": [{"name": "embedder", "mib": 1}]})");
  c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->headroom->deployed_context, 0);  // not given: the cells the runtime ran with
}

TEST_F(CaseFileTest, HeadroomErrorsNameTheFieldTheValueAndWhatIsValid) {
  auto with = [&](const char* block) {
    json j = good_;
    j["headroom"] = json::parse(block);
    return error_of(j);
  };
  EXPECT_THAT(with(R"({})"), AllOf(HasSubstr("c1.json"), HasSubstr("field \"headroom\""), HasSubstr("names nothing"),
                                  HasSubstr("deployed_context"), HasSubstr("neighbours")));
  EXPECT_THAT(with(R"({"deployed_context": 0})"),
              AllOf(HasSubstr("field \"headroom.deployed_context\" = 0"), HasSubstr("out of range"), HasSubstr("from 1 to 2147483647")));
  EXPECT_THAT(with(R"({"deployed_context": "32k"})"), AllOf(HasSubstr("headroom.deployed_context\" = \"32k\""), HasSubstr("is a string")));
  EXPECT_THAT(with(R"({"deployed_context": 4096, "spare": 1})"), AllOf(HasSubstr("unknown field \"headroom.spare\""), HasSubstr("neighbours")));
  EXPECT_THAT(with(R"({"neighbours": {"name": "x"}})"), AllOf(HasSubstr("field \"headroom.neighbours\""), HasSubstr("expected a list")));
  EXPECT_THAT(with(R"({"neighbours": []})"), AllOf(HasSubstr("headroom.neighbours"), HasSubstr("empty list")));
  EXPECT_THAT(with(R"({"neighbours": [{"name": "a"}]})"),
              AllOf(HasSubstr("field \"headroom.neighbours[0].mib\""), HasSubstr("missing"), HasSubstr("in MiB")));
  EXPECT_THAT(with(R"({"neighbours": [{"name": "a", "mib": -5}]})"),
              AllOf(HasSubstr("headroom.neighbours[0].mib\" = -5"), HasSubstr("out of range")));
  EXPECT_THAT(with(R"({"neighbours": [{"name": "a", "mib": 5}, {"name": "a", "mib": 6}]})"),
              AllOf(HasSubstr("headroom.neighbours[1].name\" = \"a\""), HasSubstr("given twice")));
  EXPECT_THAT(with(R"({"neighbours": [{"name": "a", "mib": 5, "device": "GPU 0"}]})"),
              AllOf(HasSubstr("headroom.neighbours[0].device\" = \"GPU 0\""), HasSubstr("(CPU, CUDA0)")));
  EXPECT_THAT(with(R"({"neighbours": [{"name": "", "mib": 5}]})"), AllOf(HasSubstr("headroom.neighbours[0].name"), HasSubstr("empty")));
  EXPECT_THAT(with(R"({"neighbours": [{"name": "a", "mib": 5, "match": ""}]})"), AllOf(HasSubstr("headroom.neighbours[0].match"), HasSubstr("empty")));
  EXPECT_THAT(with(R"({"neighbours": [{"name": "a", "mib": 5, "pid": 7}]})"), HasSubstr("unknown field \"headroom.neighbours[0].pid\""));
  // Several devices expected: the neighbour must say which it shares.
  json two = good_;
  two["expect"]["backend"] = json::array({"CUDA0", "CUDA1"});
  two["headroom"] = json::parse(R"({"neighbours": [{"name": "a", "mib": 5}]})");
  EXPECT_THAT(error_of(two), AllOf(HasSubstr("headroom.neighbours[0].device"), HasSubstr("missing"), HasSubstr("CUDA0,CUDA1")));
}

TEST_F(CaseFileTest, ParsesCaseTextWithoutAFile) {
  auto c = parse_case_text(good_.dump(), (root_ / "cases/c1.json").string(), suite());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->name, "c1");
  auto bad = parse_case_text("{\"name\": ", "cases/c1.json", suite());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("cases/c1.json: not valid JSON"));
}

}  // namespace
}  // namespace fp

namespace fp {
namespace {

// Found by fuzz_case: a number beyond a double made nlohmann throw out_of_range, not parse_error.
TEST(CaseFileFuzzRegression, NumberTooLargeForADoubleIsAnErrorNotACrash) {
  const std::string path = ::testing::TempDir() + "/huge-number.json";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("{\"name\": \"x\", \"seed\": 1e99999}", f);
  std::fclose(f);
  auto c = load_case(path, *load_suite(FLASHPROOF_SOURCE_DIR));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, ::testing::HasSubstr("not valid JSON"));
}

// fuzz:short found it: a path longer than the file system allows made std::filesystem throw.
TEST_F(CaseFileTest, PathTooLongIsAnErrorNotACrash) {
  good_["model"]["recipe"] = "fixtures/models/tiny.json" + std::string(5000, 'R');
  EXPECT_THAT(error_of(good_), HasSubstr("model.recipe"));
  good_["model"].erase("recipe");
  good_["model"]["path"] = "models/" + std::string(5000, 'm') + ".gguf";
  EXPECT_THAT(error_of(good_), HasSubstr("model.path"));
}

// A split GGUF (path names its first shard): one sha256 per shard, in order, joined into the
// model's one identity; a single string, or the wrong count, is an error saying what to give.
TEST_F(CaseFileTest, SplitModelNeedsOneSha256PerShard) {
  for (int i = 1; i <= 3; ++i) std::ofstream(root_ / ("models/big-0000" + std::to_string(i) + "-of-00003.gguf")) << "GGUF";
  const std::string a(64, 'a'), b(64, 'b'), c3(64, 'c');
  good_["model"] = {{"path", "models/big-00001-of-00003.gguf"}, {"sha256", json::array({a, b, c3})}};
  auto c = load(good_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->model.shard_sha256, (std::vector<std::string>{a, b, c3}));
  EXPECT_EQ(c->model.sha256, a + "," + b + "," + c3);

  good_["model"]["sha256"] = a;
  EXPECT_THAT(error_of(good_), AllOf(HasSubstr("field \"model.sha256\""), HasSubstr("split GGUF of 3 shards: expected an array of 3")));
  good_["model"]["sha256"] = json::array({a, b});
  EXPECT_THAT(error_of(good_), HasSubstr("2 values; model.path names a split GGUF of 3 shards"));
  good_["model"]["sha256"] = json::array({a, b, "nope"});
  EXPECT_THAT(error_of(good_), HasSubstr("\"nope\" is not a sha256"));
}

TEST_F(CaseFileTest, OneFileTakesOneSha256) {
  auto c = load(good_);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->model.shard_sha256.size(), 1u);
  EXPECT_EQ(c->model.sha256, c->model.shard_sha256[0]);
  good_["model"]["sha256"] = json::array({std::string(64, 'a')});
  EXPECT_THAT(error_of(good_), HasSubstr("model.path names one file"));
}

}  // namespace
}  // namespace fp
