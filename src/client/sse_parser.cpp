#include "client/sse_parser.h"

#include <utility>

#include "util/text.h"

namespace fp {

SseParser::SseParser(Callback on_event, size_t max_event_bytes)
    : on_event_(std::move(on_event)), max_event_bytes_(max_event_bytes) {}

bool SseParser::has_partial_event() const { return !line_.empty() || seen_field_; }

Status SseParser::fail(std::string message) {
  error_ = std::move(message);
  return make_error(error_);
}

Status SseParser::feed(std::string_view bytes) {
  if (!error_.empty()) return make_error(error_);
  size_t i = 0;
  while (i < bytes.size()) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (bytes[i] == '\n') {
        ++i;
        continue;
      }
    }
    size_t end = bytes.find_first_of("\r\n", i);
    size_t stop = end == std::string_view::npos ? bytes.size() : end;
    line_.append(bytes.substr(i, stop - i));
    if (line_.size() + data_.size() + event_type_.size() > max_event_bytes_) {
      return fail("SSE event exceeds the limit of " + std::to_string(max_event_bytes_) +
                  " bytes (event starts " + quote(data_.empty() ? line_ : data_) +
                  "); a valid event is smaller");
    }
    if (end == std::string_view::npos) break;
    skip_lf_ = bytes[end] == '\r';
    i = end + 1;
    FP_TRY_STATUS(process_line());
  }
  return ok_status();
}

Status SseParser::process_line() {
  std::string line = std::move(line_);
  line_.clear();
  if (line.empty()) return dispatch();
  if (line[0] == ':') return ok_status();  // comment
  seen_field_ = true;
  size_t colon = line.find(':');
  std::string_view field = std::string_view(line).substr(0, colon);
  std::string_view value;
  if (colon != std::string::npos) {
    value = std::string_view(line).substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    data_.append(value);
    data_ += '\n';
  } else if (field == "event") {
    event_type_ = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_ = std::string(value);
  } else if (field != "retry" && on_unknown_field_) {
    Status st = on_unknown_field_(field, value);
    if (!st) return fail(st.error().message);
  }
  return ok_status();
}

Status SseParser::dispatch() {
  seen_field_ = false;
  if (data_.empty()) {  // an event with no data is not dispatched
    event_type_.clear();
    return ok_status();
  }
  SseEvent ev;
  data_.pop_back();  // the '\n' after the last data line
  ev.data = std::move(data_);
  ev.event = std::move(event_type_);
  ev.id = last_id_;
  data_.clear();
  event_type_.clear();
  ++dispatched_;
  Status st = on_event_(ev);
  if (!st) return fail(st.error().message);
  return ok_status();
}

}  // namespace fp
