// Fuzzes the OpenAI streaming chunk parser: each input line is one SSE data payload applied in
// order to one StreamResult, as a stream would; the whole input is also read as an error body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "client/openai_chunk.h"

namespace {
// llama-server's names (src/runtime/data/llama-server.json "timings"), so that the timings path runs.
fp::ServerTimingKeys llama_server_keys() {
  fp::ServerTimingKeys k;
  k.object = "timings";
  k.prompt_ms = "prompt_ms";
  k.prompt_tokens = "prompt_n";
  k.cached_tokens = "cache_n";
  k.prompt_per_second = "prompt_per_second";
  k.decode_ms = "predicted_ms";
  k.decode_tokens = "predicted_n";
  k.decode_per_second = "predicted_per_second";
  return k;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fp::ServerTimingKeys keys = llama_server_keys();
  std::string_view in(reinterpret_cast<const char*>(data), size);
  fp::StreamResult r;
  double t = 0;
  size_t start = 0;
  while (start <= in.size()) {
    size_t end = in.find('\n', start);
    if (end == std::string_view::npos) end = in.size();
    const size_t events_before = r.content_event_times_s.size();
    const bool done_before = r.done;
    fp::Status st = fp::apply_stream_chunk(in.substr(start, end - start), t, r, keys);
    if (!st && st.error().message.empty()) __builtin_trap();
    if (done_before && r.content_event_times_s.size() != events_before) __builtin_trap();  // nothing after [DONE]
    t += 0.001;
    start = end + 1;
  }
  if (r.ttft_s >= 0 && r.content_event_times_s.empty()) __builtin_trap();
  std::string msg = fp::error_message_from_body(in);
  (void)msg;
  return 0;
}
