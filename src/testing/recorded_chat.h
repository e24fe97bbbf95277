// Test support (header only, for *_test.cpp): a recorded llama-server chat stream, as events and as
// the bytes on the wire.
#pragma once

#include <string>
#include <vector>

namespace fp::testing {

// Events of a llama-server build 11669 /v1/chat/completions stream ("stream": true), each
// without its trailing blank line: role-only first chunk, five content chunks (one holding a
// two-byte UTF-8 character), a final chunk with usage and timings, then [DONE].
inline std::vector<std::string> recorded_chat_events() {
  const std::string tail =
      R"(,"created":1764460000,"id":"chatcmpl-x","model":"m","system_fingerprint":"b11669-Debian","object":"chat.completion.chunk"})";
  auto content = [&](const std::string& text) {
    return R"(data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":")" + text + R"("}}])" + tail;
  };
  return {
      R"(data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}])" + tail,
      content(" hello"),
      content(" world"),
      content(","),
      content(" caf\xC3\xA9"),
      content(" ok"),
      R"(data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1764460000,"id":"chatcmpl-x","model":"m","system_fingerprint":"b11669-Debian","object":"chat.completion.chunk","usage":{"completion_tokens":8,"prompt_tokens":12,"total_tokens":20},"timings":{"cache_n":0,"prompt_n":12,"prompt_ms":5.1,"prompt_per_token_ms":0.42,"prompt_per_second":2352.9,"predicted_n":8,"predicted_ms":40.2,"predicted_per_token_ms":5.0,"predicted_per_second":199.0}})",
      "data: [DONE]",
  };
}
inline const char* kRecordedText = " hello world, caf\xC3\xA9 ok";

// The whole recorded stream as sent on the wire ("\n\n" after every event).
inline std::string recorded_chat_stream() {
  std::string s;
  for (const auto& e : recorded_chat_events()) s += e + "\n\n";
  return s;
}

}  // namespace fp::testing
