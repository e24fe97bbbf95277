// Incremental Server-Sent-Events parser (WHATWG "event stream" format): bytes go in at any
// chunk boundary, complete events come out through a callback. Bounded: an event larger than
// max_event_bytes is an error, never unbounded growth.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "util/result.h"

namespace fp {

// One dispatched event. `event` is empty when the event had no `event:` field.
struct SseEvent {
  std::string event;
  std::string data;  // every `data:` line of the event, joined with '\n'
  std::string id;    // last `id:` field seen, empty if none
};

class SseParser {
 public:
  // Called once per complete event; an Error stops the parser and is returned by feed().
  using Callback = std::function<Status(const SseEvent&)>;
  static constexpr size_t kDefaultMaxEventBytes = size_t{4} << 20;

  // Called for a field the format does not define (not data, event, id, retry), which the format
  // says to ignore: llama-server sends a mid-stream failure as an `error: {...}` line.
  using FieldCallback = std::function<Status(std::string_view field, std::string_view value)>;
  explicit SseParser(Callback on_event, size_t max_event_bytes = kDefaultMaxEventBytes);
  void set_unknown_field_callback(FieldCallback cb) { on_unknown_field_ = std::move(cb); }

  // Consumes the next bytes of the stream. Lines may end in LF, CRLF or CR, split anywhere.
  // After the first error every later call returns that same error.
  Status feed(std::string_view bytes);

  // True when bytes of an unfinished event are held (stream ended mid-event if it stops here).
  bool has_partial_event() const;
  // Events dispatched so far.
  size_t events_dispatched() const { return dispatched_; }

 private:
  Status process_line();
  Status dispatch();
  Status fail(std::string message);

  Callback on_event_;
  FieldCallback on_unknown_field_;
  size_t max_event_bytes_;
  std::string line_;          // current, unterminated line
  std::string data_;          // data lines of the current event, each followed by '\n'
  std::string event_type_;
  std::string last_id_;
  bool seen_field_ = false;   // the current event has at least one non-comment line
  bool skip_lf_ = false;      // previous byte was CR: an LF right after it belongs to the same break
  size_t dispatched_ = 0;
  std::string error_;         // non-empty once failed
};

}  // namespace fp
