// The OpenAI-compatible streaming format: what one SSE data payload adds to a StreamResult.
#pragma once

#include <string>
#include <string_view>

#include "client/stream_client.h"
#include "util/result.h"

namespace fp {

// Applies one SSE `data` payload that arrived arrival_s after sending: `[DONE]`, or a chunk whose
// choices[0].delta.content (chat) or choices[0].text (completions) may be null, plus
// finish_reason, usage, timings and system_fingerprint. Invalid JSON and an `error` object are
// errors quoting the payload. Payloads after [DONE] are ignored.
// The runtime's timings are read where `keys` says (StreamResult::server, ::at_first_text).
Status apply_stream_chunk(std::string_view data, double arrival_s, StreamResult& r, const ServerTimingKeys& keys = {});  // keys: none read

// The server's message in an error body: {"error":{"message":..}} (llama-server, OpenAI),
// {"message":..} (vLLM) or {"error":".."}; otherwise the body itself. Returned quoted.
std::string error_message_from_body(std::string_view body);

// Where the bytes of server bodies that are not UTF-8 are noted (util/utf8.h valid_utf8_noted).
inline constexpr const char* kHttpBodies = "HTTP response bodies";

// A server's error answer for a message: `HTTP 401: "Invalid API Key"; body: {...}`, the body on one
// line, valid UTF-8 (noted under kHttpBodies), cut to its first 300 bytes (with its full size when
// cut); never a timing.
std::string http_error_text(long status, std::string_view body);

}  // namespace fp
