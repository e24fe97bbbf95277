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

// Where a runtime's own timings of a request sit in its stream events, by name: the runtime data's
// `server_timings` (src/runtime/data/<runtime>.json, runtime/adapter.h), never C++. An empty `object`
// (the default): the runtime reports none; an empty name: that timing is not read.
struct ServerTimingKeys {
  std::string object;             // the event's field holding them
  std::string prompt_ms;          // prefill time of the prompt tokens it evaluated
  std::string prompt_tokens;      // prompt tokens evaluated (the cached ones not counted)
  std::string cached_tokens;      // prompt tokens served from its prompt cache
  std::string prompt_per_second;  // its prefill rate
  std::string decode_ms;          // decode time so far
  std::string decode_tokens;      // tokens generated so far
  std::string decode_per_second;  // its decode rate
};

// A runtime's own timings of one request, as reported; NaN where it reports none.
struct ServerTimings {
  bool reported = false;  // an event carried the timings object
  double prompt_ms = std::numeric_limits<double>::quiet_NaN();
  double prompt_tokens = std::numeric_limits<double>::quiet_NaN();
  double cached_tokens = std::numeric_limits<double>::quiet_NaN();
  double prompt_per_second = std::numeric_limits<double>::quiet_NaN();
  double decode_ms = std::numeric_limits<double>::quiet_NaN();
  double decode_tokens = std::numeric_limits<double>::quiet_NaN();
  double decode_per_second = std::numeric_limits<double>::quiet_NaN();
  bool present() const { return prompt_ms == prompt_ms; }
};

struct StreamRequest {
  std::string url;              // e.g. http://127.0.0.1:PORT/v1/chat/completions
  std::string body;             // JSON body; "stream": true is the caller's job
  double timeout_s = 120;       // whole request
  double stall_timeout_s = 30;  // no byte for this long (prefill included) -> error
  size_t max_bytes = size_t{16} << 20;  // response body limit
  double start_at_s = 0;        // stream_concurrent only: earliest start, seconds after batch start
  std::vector<std::string> headers;  // extra headers, e.g. "Authorization: Bearer ..." (never in a message)
  ServerTimingKeys timing_keys;      // where the runtime's own timings are in its events
};

struct StreamResult {
  long http_status = 0;
  double ttft_s = -1;  // sent -> first event with non-empty content (a role-only chunk does not count)
  double e2e_s = -1;   // sent -> data: [DONE]
  std::vector<double> content_event_times_s;  // arrival of every event with non-empty content
  std::string text;                           // concatenated content
  std::string finish_reason;
  int prompt_tokens = -1, completion_tokens = -1;  // from `usage` when present
  ServerTimings server;                            // the runtime's own timings of the whole request (its last report)
  // Its timings as the first event with content carried them (llama-server with timings_per_token):
  // how many tokens it had generated, and in what decode time, before the first text reached us.
  ServerTimings at_first_text;
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

// What became of one request of a batch.
enum class RequestFate {
  answered,     // a whole answer (the Result holds it)
  failed,       // an answer that is an error (HTTP status, bad event, timeout): the server still answers
  stalled,      // no byte for stall_timeout_s: the server stopped answering
  unreachable,  // no connection, or the connection dropped without an answer: the server is gone
  given_up,     // in flight when another request stalled or found the server gone: abandoned at once
  not_sent,     // never sent: the server had stopped answering before its turn
  not_due,      // never sent: its turn came after BatchOptions::start_until_s (a phase's duration)
};
const char* fate_name(RequestFate f);
// A server that stopped answering: stalled or unreachable.
inline bool fate_stops_batch(RequestFate f) { return f == RequestFate::stalled || f == RequestFate::unreachable; }

struct BatchOptions {
  // Stop at the first request that stalls or finds the server gone: the requests in flight are
  // given up and the rest are not sent, so a dead or wedged server costs one stall timeout, not one
  // per request. An HTTP error or a bad event does not stop the batch (the server still answers).
  bool stop_when_unanswered = true;
  // No request starts later than this many seconds after the batch started (a closed loop with a
  // duration: the requests not started are `not_due`, not failures). Below 0: no limit.
  double start_until_s = -1;
};

struct BatchOutcome {
  std::vector<Result<StreamResult>> results;  // in the order of reqs
  std::vector<RequestFate> fates;             // the same order
  // Set when the batch stopped because the server stopped answering: the first such request's error,
  // the index of that request and when it was called stalled or gone (seconds after the batch start).
  std::string unanswered;
  size_t unanswered_index = 0;
  double unanswered_at_s = -1;
  size_t count(RequestFate f) const;
};

// Runs reqs on one thread through libcurl's multi interface, at most `concurrency` in flight
// (values below 1 count as 1); the next starts as one finishes, in order of start_at_s (ties in
// vector order) and never before its start_at_s. Results are in the order of reqs; one failing
// request does not stop the others, a server that stopped answering does (BatchOptions).
BatchOutcome stream_batch(const std::vector<StreamRequest>& reqs, int concurrency, const BatchOptions& options = {});
// stream_batch's results only.
std::vector<Result<StreamResult>> stream_concurrent(const std::vector<StreamRequest>& reqs, int concurrency);

}  // namespace fp
