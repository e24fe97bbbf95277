#include "draft/new_case.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "case/case_file.h"
#include "case/suite.h"
#include "runtime/kv_cache_types.h"

namespace fp {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

LaunchLine llama() {
  auto l = load_launch_line("llama-server");
  EXPECT_TRUE(l.ok()) << l.error().message;
  return l ? *l : LaunchLine{};
}

LaunchedFacts tiny_facts() {
  LaunchedFacts f;
  f.model_path = "fixtures/models/generated/tiny.gguf";
  f.sha256 = std::string(64, 'a');
  f.model_bytes = 1 << 20;
  ModelFacts m;
  m.architecture = "llama";
  m.layers = 4;
  m.head_size_k = m.head_size_v = 64;
  m.trained_context = 2048;
  f.model = m;
  f.no_gpu_why = "NVML: no library";
  return f;
}

NewCaseBasics basics() { return {"t1", "chat", "llama-server", "", 0}; }

std::string decisions_text(const NewCase& n) {
  std::string s;
  for (const auto& d : n.decisions) s += d.field + " = " + d.value + ": " + d.why + "\n";
  return s;
}

TEST(NewCase, PlaceholdersReplaceHostPortModelContextAndFlag) {
  const std::vector<std::string> args = {"-m", "/m/tiny.gguf", "--host", "0.0.0.0", "--port", "8080", "-c", "1024",
                                         "-np", "1", "--flash-attn=on", "-t", "2"};
  auto n = draft_launched_case(basics(), args, llama(), tiny_facts(), "llama-server -m /m/tiny.gguf ...");
  ASSERT_TRUE(n.ok()) << n.error().message;
  const auto& j = n->json;
  EXPECT_EQ(j["launch"]["argv"], nlohmann::ordered_json::parse(R"(["{runtime}", "-m", "{model}", "--host", "{host}",
      "--port", "{port}", "-c", "{context}", "-np", "1", "--flash-attn={flag}", "-t", "2"])"));
  EXPECT_EQ(j["shape"]["context"], 1024);
  EXPECT_EQ(j["flag"]["on"], "on");
  EXPECT_EQ(j["flag"]["use"], "on");
  EXPECT_EQ(j["expect"]["fused_attention"], true);
  EXPECT_EQ(j["expect"]["backend"], "CPU");
  EXPECT_EQ(j["model"]["sha256"], std::string(64, 'a'));
  EXPECT_THAT(decisions_text(*n), AllOf(HasSubstr("llama, 4 layers, head size 64, trained context 2048"),
                                        HasSubstr("{port}: flashproof picks a free loopback port"),
                                        HasSubstr("expect.backend = CPU: no GPU here (NVML: no library)")));
}

TEST(NewCase, MissingFlagAndPortAreAddedAndTheContextComesFromTheModel) {
  auto n = draft_launched_case(basics(), {"-m", "/m/tiny.gguf", "-fa", "auto"}, llama(), tiny_facts(), "cmd");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->json["launch"]["argv"], nlohmann::ordered_json::parse(R"(["{runtime}", "-m", "{model}", "-fa", "{flag}", "--port", "{port}"])"));
  EXPECT_EQ(n->json["shape"]["context"], 2048) << "no -c: llama-server takes the model's trained context";
  EXPECT_EQ(n->json["flag"]["on"], "auto");
  EXPECT_EQ(n->json["flag"]["off"], "off");

  auto no_flag = draft_launched_case(basics(), {"-m", "/m/tiny.gguf", "-c", "0", "--port", "9"}, llama(), tiny_facts(), "cmd");
  ASSERT_TRUE(no_flag.ok()) << no_flag.error().message;
  EXPECT_EQ(no_flag->json["launch"]["argv"].back(), "{flag}");
  EXPECT_EQ(no_flag->json["flag"]["on"], "auto") << "the runtime's default, from the data file";
  EXPECT_EQ(no_flag->json["shape"]["context"], 2048) << "-c 0: from the model";
}

TEST(NewCase, FlagOffExpectsFusedAttentionNotActive) {
  auto n = draft_launched_case(basics(), {"-m", "/m/tiny.gguf", "-fa", "off", "-c", "512"}, llama(), tiny_facts(), "cmd");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->json["flag"]["use"], "off");
  EXPECT_EQ(n->json["flag"]["on"], "on");
  EXPECT_EQ(n->json["expect"]["fused_attention"], false);
}

TEST(NewCase, LoggingAndKeyOptionsAreDroppedAndTheKeyIsNeverWritten) {
  auto n = draft_launched_case(basics(), {"-m", "/m/tiny.gguf", "--log-file", "/var/log/l.log", "-v", "--api-key", "s3cr3t-key",
                                          "-lv", "3", "--api-key-file=/etc/keys"},
                               llama(), tiny_facts(), "cmd");
  ASSERT_TRUE(n.ok()) << n.error().message;
  const std::string all = n->json.dump() + decisions_text(*n);
  EXPECT_THAT(all, Not(HasSubstr("s3cr3t-key")));
  EXPECT_THAT(all, Not(HasSubstr("/etc/keys")));
  EXPECT_THAT(n->json["launch"]["argv"].dump(), AllOf(Not(HasSubstr("--log-file")), Not(HasSubstr("\"-v\"")), Not(HasSubstr("-lv"))));
  EXPECT_THAT(decisions_text(*n), AllOf(HasSubstr("without --log-file /var/log/l.log"), HasSubstr("without --api-key ***")));
}

TEST(NewCase, RefusesDownloadsAndCommandsWithoutAModel) {
  auto hf = draft_launched_case(basics(), {"-hf", "org/model"}, llama(), tiny_facts(), "cmd");
  ASSERT_FALSE(hf.ok());
  EXPECT_THAT(hf.error().message, HasSubstr("-hf: the case needs the model as a local file"));
  auto none = command_model_path({"--port", "1"}, llama());
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("names no model file (-m or --model PATH)"));
  EXPECT_EQ(*command_model_path({"--model=/x.gguf"}, llama()), "/x.gguf");
}

TEST(NewCase, ContextLeftToAModelWithoutOneIsAnError) {
  LaunchedFacts f = tiny_facts();
  f.model->trained_context = 0;
  auto n = draft_launched_case(basics(), {"-m", "/m/tiny.gguf"}, llama(), f, "cmd");
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.error().message, HasSubstr("give the context explicitly (-c N)"));
  auto bad = draft_launched_case(basics(), {"-m", "/m/tiny.gguf", "-c", "lots"}, llama(), tiny_facts(), "cmd");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("-c \"lots\": expected a whole number"));
}

TEST(NewCase, BackendFollowsOffloadOptionsAndTheGpus) {
  const OffloadOptions o = llama().offload;
  const std::vector<std::string> two = {"CUDA0", "CUDA1"};
  auto b = [&](const std::vector<std::string>& args, const std::vector<std::string>& gpus) {
    auto d = decide_backend(args, o, 4, gpus, "NVML lists no GPU");
    EXPECT_TRUE(d.ok()) << d.error().message;
    return d ? d->backends : std::vector<std::string>{};
  };
  EXPECT_THAT(b({"-ngl", "99"}, {}), ElementsAre("CPU"));
  EXPECT_THAT(b({}, two), ElementsAre("CUDA0", "CUDA1")) << "default -ngl auto: every GPU";
  EXPECT_THAT(b({"-ngl", "0"}, two), ElementsAre("CPU"));
  EXPECT_THAT(b({"--n-gpu-layers", "2"}, {"CUDA0"}), ElementsAre("CUDA0", "CPU")) << "partial offload";
  EXPECT_THAT(b({"-ngl", "all", "-dev", "none"}, two), ElementsAre("CPU"));
  EXPECT_THAT(b({"-dev", "CUDA1"}, two), ElementsAre("CUDA1"));
  EXPECT_THAT(b({"-sm", "none", "-mg", "1"}, two), ElementsAre("CUDA1"));
  EXPECT_THAT(b({"-sm", "row"}, two), ElementsAre("CUDA0")) << "row split keeps KV and attention on the main GPU";
  EXPECT_THAT(b({"-sm", "layer", "-ngl", "99"}, two), ElementsAre("CUDA0", "CUDA1"));
  auto bad = decide_backend({"-ngl", "many"}, o, 4, two, "");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("-ngl many: expected a number of layers or one of: auto, all"));
  auto bad_mg = decide_backend({"-sm", "none", "-mg", "2"}, o, 4, two, "");
  ASSERT_FALSE(bad_mg.ok());
  EXPECT_THAT(bad_mg.error().message, HasSubstr("-mg 2: expected an index among the 2 devices"));
}

TEST(NewCase, MemorySaysWhetherWeightsAndCacheFitTheDevice) {
  // Llama-3.1-8B's shape at 32768 cells: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 128 KiB a
  // token, 4 GiB of f16 cache; q8_0 halves it (34 bytes per 32 values).
  LaunchedFacts f = tiny_facts();
  f.model->layers = 32;
  f.model->n_head = 32;
  f.model->n_head_kv = 8;
  f.model->head_size_k = f.model->head_size_v = 128;
  f.model_bytes = 16ull << 30;
  auto types = load_kv_cache_types("llama-server");
  ASSERT_TRUE(types.ok()) << types.error().message;
  f.kv_types = *types;
  f.free_now = {{"CUDA0", 79ull << 30, "NVML, GPU 0 NVIDIA H100"}};
  const std::vector<std::string> args = {"-m", "x.gguf", "-c", "32768", "-ngl", "99"};
  MemoryFit m = decide_memory(args, f, 32768, {"CUDA0"});
  EXPECT_TRUE(m.fits);
  EXPECT_THAT(m.text, HasSubstr("weights 16.00 GiB + KV cache 4.00 GiB at 32768 cells"));
  EXPECT_THAT(m.text, HasSubstr("131072 bytes a token"));
  EXPECT_THAT(m.text, HasSubstr("CUDA0 has 79.00 GiB free now (NVML, GPU 0 NVIDIA H100): fits, 59.00 GiB left"));
  f.free_now = {{"CUDA0", 18ull << 30, "NVML"}};
  m = decide_memory(args, f, 32768, {"CUDA0"});
  EXPECT_FALSE(m.fits);
  EXPECT_THAT(m.text, HasSubstr("DOES NOT FIT, short by 2.00 GiB; about 16384 cells would"));
  const std::vector<std::string> q8 = {"-m", "x.gguf", "-ctk", "q8_0", "-ctv", "q8_0"};
  f.free_now = {{"CUDA0", 19ull << 30, "NVML"}};  // 16 GiB + 2.125 GiB of q8_0 cache
  m = decide_memory(q8, f, 32768, {"CUDA0"});
  EXPECT_TRUE(m.fits) << m.text;
  EXPECT_THAT(m.text, HasSubstr("K q8_0, V q8_0: 69632 bytes a token"));
  EXPECT_THAT(decide_memory(args, f, 32768, {"CPU"}).text, HasSubstr("free memory on CPU not measured here"));
  f.model.reset();
  EXPECT_TRUE(decide_memory(args, f, 32768, {"CUDA0"}).text.empty());
}

TEST(NewCase, AttachedCaseLoadsAndKeepsOnlyTheKeysName) {
  AttachRequest r;
  r.endpoint = "http://127.0.0.1:8080/";
  r.model = "tiny";
  r.api_key_env = "FP_KEY";
  r.log_command = {"journalctl", "-fu", "llama"};
  r.required = {"placement"};
  r.no_gpu_why = "NVML lists no GPU";
  auto n = draft_attached_case({"a1", "completion", "llama-server", "", 0}, r);
  ASSERT_TRUE(n.ok()) << n.error().message;
  const auto& j = n->json;
  EXPECT_EQ(j["attach"]["api_key_env"], "FP_KEY");
  EXPECT_EQ(j["attach"]["log_command"].size(), 3u);
  EXPECT_EQ(j["shape"]["prompt_set"], "code");
  EXPECT_EQ(j["expect"]["backend"], "CPU");
  EXPECT_EQ(j["expect"]["evidence"][0], "placement");
  EXPECT_FALSE(j.contains("launch"));
  auto c = parse_case_text(j.dump(), "/x/cases/a1.json", *load_suite(FLASHPROOF_SOURCE_DIR));
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->attach);
  EXPECT_EQ(c->attach->endpoint, "http://127.0.0.1:8080") << "the trailing slash is dropped";
  EXPECT_EQ(c->attach->log_command.front(), "journalctl");
}

TEST(NewCase, AttachedWithoutALogSaysEveryLevelIsUnavailable) {
  AttachRequest r;
  r.endpoint = "http://127.0.0.1:8080";
  r.model = "tiny";
  r.expect_backend = {"CUDA0"};
  auto n = draft_attached_case({"a2", "chat", "llama-server", "", 16}, r);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->json["expect"]["backend"], "CUDA0");
  EXPECT_EQ(n->json["shape"]["max_output_tokens"], 16);
  EXPECT_THAT(decisions_text(*n), HasSubstr("every evidence level is unavailable"));
}

}  // namespace
}  // namespace fp
