#include "runtime/adapter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "client/openai_chunk.h"
#include "testing/recorded_chat.h"

namespace fp {
namespace {

// llama-server's own timings are named in its runtime data (src/runtime/data/llama-server.json
// "timings"), not in C++: the recorded build-11669 stream read through them.
TEST(AdapterTimings, LlamaServerNamesItsOwnTimingsInItsData) {
  auto a = load_adapter("llama-server");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->server_timing_keys.object, "timings");
  StreamResult r;
  for (const auto& event : testing::recorded_chat_events()) {
    const std::string data = event.substr(event.find(':') + 1);
    ASSERT_TRUE(apply_stream_chunk(data, 0.1, r, a->server_timing_keys));
  }
  EXPECT_TRUE(r.server.reported);
  EXPECT_DOUBLE_EQ(r.server.prompt_ms, 5.1);
  EXPECT_DOUBLE_EQ(r.server.prompt_tokens, 12);
  EXPECT_DOUBLE_EQ(r.server.prompt_per_second, 2352.9);
  EXPECT_DOUBLE_EQ(r.server.decode_ms, 40.2);
  EXPECT_DOUBLE_EQ(r.server.decode_tokens, 8);
  EXPECT_DOUBLE_EQ(r.server.decode_per_second, 199.0);
}

// Every shipped runtime data file reads; one that names no timings object reads none.
TEST(AdapterTimings, EveryShippedRuntimeLoads) {
  for (const char* runtime : {"llama-server", "vllm", "openai-compatible", "openai-compatible-llama-server"}) {
    auto a = load_adapter(runtime);
    ASSERT_TRUE(a) << runtime << ": " << a.error().message;
  }
}

// Each runtime's data names its own timing keys: vLLM's OpenAI server streams none (usage only), so
// its data names none, and a stream that carries llama.cpp's `timings` anyway is read as none.
TEST(AdapterTimings, VllmNamesNone) {
  auto a = load_adapter("vllm");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->server_timing_keys.object.empty());
  StreamResult r;
  ASSERT_TRUE(apply_stream_chunk(R"({"choices":[{"delta":{"content":"x"}}],"timings":{"prompt_ms":1.5,"prompt_n":3}})", 0.1, r,
                                 a->server_timing_keys));
  EXPECT_FALSE(r.server.reported);
  EXPECT_TRUE(std::isnan(r.server.prompt_ms));
}

}  // namespace
}  // namespace fp
