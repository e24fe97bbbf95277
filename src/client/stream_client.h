// Streamed OpenAI-compatible requests (/v1/chat/completions, /v1/completions with "stream": true),
// timed the way users feel them. All times are steady-clock seconds after the request was sent
// (handed to libcurl, connection set-up included, as vLLM's benchmark does).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace fp {

// Where a runtime reports its own timings of a request in its stream, by name (the runtime data's
// "timings", runtime/adapter.h: llama-server's `timings` object with prompt_ms, predicted_ms, ...).
// An empty `object`: the runtime reports none.
struct ServerTimingKeys {
  std::string object;             // the chunk's field holding them
  std::string prompt_ms;          // prompt processing time, ms
  std::string prompt_tokens;      // prompt tokens processed
  std::string prompt_per_second;  // prompt processing rate
  std::string decode_ms;          // decode time, ms
  std::string decode_tokens;      // tokens decoded
  std::string decode_per_second;  // decode rate
};

// The runtime's own timings of one request, read through ServerTimingKeys (NaN: not reported).
struct ServerTimings {
  bool reported = false;  // the stream carried the timings object
  double prompt_ms = std::numeric_limits<double>::quiet_NaN();
  double prompt_tokens = std::numeric_limits<double>::quiet_NaN();
  double prompt_per_second = std::numeric_limits<double>::quiet_NaN();
  double decode_ms = std::numeric_limits<double>::quiet_NaN();
  double decode_tokens = std::numeric_limits<double>::quiet_NaN();
  double decode_per_second = std::numeric_limits<double>::quiet_NaN();
};

struct StreamRequest {
  std::string url;              // e.g. http://127.0.0.1:PORT/v1/chat/completions
  std::string body;             // JSON body; "stream": true is the caller's job
  double timeout_s = 120;       // whole request
  double stall_timeout_s = 30;  // no byte for this long (prefill included) -> error
  size_t max_bytes = size_t{16} << 20;  // response body limit
  double start_at_s = 0;        // stream_concurrent only: earliest start, seconds after batch start
  std::vector<std::string> headers;  // extra headers, e.g. "Authorization: Bearer ..." (never in a message)
  ServerTimingKeys timing_keys;      // where the runtime reports its own timings (none: empty)
};

struct StreamResult {
  long http_status = 0;
  double ttft_s = -1;  // sent -> first event with non-empty content (a role-only chunk does not count)
  double e2e_s = -1;   // sent -> data: [DONE]
  std::vector<double> content_event_times_s;  // arrival of every event with non-empty content
  std::string text;                           // concatenated content
  std::string finish_reason;
  int prompt_tokens = -1, completion_tokens = -1;  // from `usage` when present
  ServerTimings server;                            // the runtime's own timings (StreamRequest::timing_keys)
  std::string system_fingerprint;                  // when present
  bool done = false;                               // saw data: [DONE]
  double queued_s = 0;        // wanted start (batch start + start_at_s) -> actually sent
  double start_offset_s = 0;  // batch start -> actually sent
};

// One streamed request. Errors name the URL: HTTP error status (with the server's message and body,
// openai_chunk.h http_error_text),
// invalid JSON or an error in an event, a stall, the body over max_bytes, a timeout, and a
// stream that ends without data: [DONE].
Result<StreamResult> stream_request(const StreamRequest& req);

// Runs reqs on one thread through libcurl's multi interface, at most `concurrency` in flight
// (values below 1 count as 1); the next starts as one finishes, in order of start_at_s (ties in
// vector order) and never before its start_at_s. Results are in the order of reqs; one failing
// request does not stop the others.
std::vector<Result<StreamResult>> stream_concurrent(const std::vector<StreamRequest>& reqs, int concurrency);

}  // namespace fp
