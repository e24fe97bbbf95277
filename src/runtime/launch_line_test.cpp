#include "runtime/launch_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fp {
namespace {

using ::testing::HasSubstr;

TEST(LaunchLine, FindsAnOptionsLastValueInEitherForm) {
  const std::vector<std::string> argv = {"-m", "a.gguf", "--port", "1", "--port=2", "-c", "512"};
  auto port = find_option(argv, {"--port"});
  ASSERT_TRUE(port);
  EXPECT_EQ(port->value, "2");
  EXPECT_TRUE(port->inline_value);
  auto ctx = find_option(argv, {"-c", "--ctx-size"});
  ASSERT_TRUE(ctx);
  EXPECT_EQ(ctx->value, "512");
  EXPECT_EQ(ctx->index, 5u);
  EXPECT_FALSE(find_option(argv, {"-fa"}));
  EXPECT_FALSE(find_option({"-m"}, {"-m"})) << "an option without its value at the end names nothing";
}

TEST(LaunchLine, ShippedLlamaServerDataParses) {
  auto l = load_launch_line("llama-server");
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->flag_default, "auto");
  EXPECT_EQ(l->placeholders.at("model").front(), "-m");
  EXPECT_FALSE(l->offload.gpu_layers.empty());
  EXPECT_EQ(l->served_model_default, "file_name");
}

TEST(LaunchLine, RuntimeWithoutLaunchLineSaysSo) {
  auto l = load_launch_line("openai-compatible");
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.error().message, HasSubstr("no \"launch_line\""));
}

TEST(LaunchLine, ErrorsNameTheField) {
  auto j = nlohmann::json::parse(R"({"served_model": {"options": ["-a"], "default": "alias"}})");
  auto l = parse_launch_line(j, "x.json");
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.error().message, HasSubstr("x.json: field \"launch_line.served_model.default\""));
  auto unknown = parse_launch_line(nlohmann::json::parse(R"({"placeholder": {}})"), "x.json");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("placeholder"));
}

TEST(LaunchLine, ServedModelIsTheFirstAliasElseTheFileName) {
  auto l = load_launch_line("llama-server");
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(served_model_name(&*l, {"{runtime}", "-m", "{model}", "-a", "tiny, other"}, "/m/tiny.gguf"), "tiny");
  EXPECT_EQ(served_model_name(&*l, {"{runtime}", "-m", "{model}", "--alias=x"}, "/m/tiny.gguf"), "x");
  EXPECT_EQ(served_model_name(&*l, {"{runtime}", "-m", "{model}"}, "/m/tiny.gguf"), "tiny.gguf");
  EXPECT_EQ(served_model_name(nullptr, {}, "/m/tiny.gguf"), "tiny.gguf");
  LaunchLine vllm_like;
  vllm_like.served_model_default = "model_argument";
  EXPECT_EQ(served_model_name(&vllm_like, {}, "/models/llama"), "/models/llama");
}

}  // namespace
}  // namespace fp
