// One streamed request in flight on a libcurl multi handle: owns the easy handle, feeds the body
// through the SSE parser into a StreamResult, and turns the outcome into a Result.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "client/curl_handle.h"
#include "client/sse_parser.h"
#include "client/stream_client.h"

namespace fp {

using SteadyClock = std::chrono::steady_clock;

class StreamTransfer {
 public:
  // A ready easy handle for req; callbacks point at the returned object, which must not move.
  static Result<std::unique_ptr<StreamTransfer>> create(const StreamRequest& req);
  StreamTransfer(const StreamTransfer&) = delete;
  StreamTransfer& operator=(const StreamTransfer&) = delete;

  CURL* handle() const { return easy_.get(); }
  // Call right before handing the handle to curl: starts the clock.
  void mark_sent(SteadyClock::time_point sent, SteadyClock::time_point wanted,
                 SteadyClock::time_point batch_start);
  // When the transfer counts as stalled: the last byte (or the send) plus stall_timeout_s.
  SteadyClock::time_point stall_deadline() const;
  // The outcome once curl reports the transfer done with `code`.
  Result<StreamResult> finish(CURLcode code);
  // The outcome when the stall deadline passed (success if [DONE] had already arrived).
  Result<StreamResult> finish_stalled(SteadyClock::time_point now);

 private:
  explicit StreamTransfer(const StreamRequest& req);
  static size_t on_write(char* ptr, size_t size, size_t n, void* self);
  static size_t on_header(char* ptr, size_t size, size_t n, void* self);
  size_t write(std::string_view bytes);
  Error error(const std::string& what) const;
  double since_sent(SteadyClock::time_point t) const;

  StreamRequest req_;
  CurlEasy easy_;
  CurlHeaders headers_;
  char errbuf_[CURL_ERROR_SIZE];
  SseParser parser_;
  StreamResult result_;
  SteadyClock::time_point sent_{}, last_byte_{}, now_{};
  size_t body_bytes_ = 0;
  std::string error_body_;  // body of a non-2xx answer, kept for its message
  std::string failure_;     // set by a callback that stopped the transfer
};

}  // namespace fp
