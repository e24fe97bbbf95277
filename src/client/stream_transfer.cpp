#include "client/stream_transfer.h"

#include <cstdio>

#include "client/openai_chunk.h"
#include "util/text.h"

namespace fp {
namespace {

constexpr size_t kMaxErrorBody = 64 << 10;

std::string seconds_figure(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

StreamTransfer::StreamTransfer(const StreamRequest& req)
    : req_(req), parser_([this](const SseEvent& ev) { return apply_stream_chunk(ev.data, since_sent(now_), result_, req_.timing_keys); }) {
  errbuf_[0] = '\0';
  parser_.set_unknown_field_callback([](std::string_view field, std::string_view value) -> Status {
    if (field == "error") return make_error("server sent an error event: " + error_message_from_body(value));
    return ok_status();
  });
}

Result<std::unique_ptr<StreamTransfer>> StreamTransfer::create(const StreamRequest& req) {
  std::unique_ptr<StreamTransfer> t(new StreamTransfer(req));
  FP_TRY(t->easy_, make_curl_easy(req.url, req.timeout_s, t->errbuf_));
  CURL* c = t->easy_.get();
  t->headers_ = json_post_headers();
  t->headers_.reset(curl_slist_append(t->headers_.release(), "Accept: text/event-stream"));
  for (const auto& h : req.headers) t->headers_.reset(curl_slist_append(t->headers_.release(), h.c_str()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, t->headers_.get());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, t->req_.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->req_.body.size()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &StreamTransfer::on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &StreamTransfer::on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(c, CURLOPT_PRIVATE, t.get());
  return t;
}

void StreamTransfer::mark_sent(SteadyClock::time_point sent, SteadyClock::time_point wanted,
                               SteadyClock::time_point batch_start) {
  sent_ = last_byte_ = sent;
  result_.queued_s = std::chrono::duration<double>(sent - wanted).count();
  result_.start_offset_s = std::chrono::duration<double>(sent - batch_start).count();
}

double StreamTransfer::since_sent(SteadyClock::time_point t) const {
  return std::chrono::duration<double>(t - sent_).count();
}

SteadyClock::time_point StreamTransfer::stall_deadline() const {
  return last_byte_ + std::chrono::duration_cast<SteadyClock::duration>(
                          std::chrono::duration<double>(req_.stall_timeout_s));
}

size_t StreamTransfer::on_header(char*, size_t size, size_t n, void* self) {
  static_cast<StreamTransfer*>(self)->last_byte_ = SteadyClock::now();
  return size * n;
}

size_t StreamTransfer::on_write(char* ptr, size_t size, size_t n, void* self) {
  return static_cast<StreamTransfer*>(self)->write(std::string_view(ptr, size * n));
}

// Returning less than bytes.size() makes curl stop the transfer (CURLE_WRITE_ERROR).
size_t StreamTransfer::write(std::string_view bytes) {
  now_ = last_byte_ = SteadyClock::now();
  body_bytes_ += bytes.size();
  if (body_bytes_ > req_.max_bytes) {
    failure_ = "response exceeds the limit of " + std::to_string(req_.max_bytes) + " bytes (max_bytes)";
    return 0;
  }
  if (result_.http_status == 0) curl_easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &result_.http_status);
  if (result_.http_status < 200 || result_.http_status >= 300) {
    if (error_body_.size() < kMaxErrorBody) error_body_.append(bytes.substr(0, kMaxErrorBody - error_body_.size()));
    return bytes.size();
  }
  Status st = parser_.feed(bytes);
  if (!st) {
    failure_ = st.error().message;
    return 0;
  }
  return bytes.size();
}

Error StreamTransfer::error(const std::string& what) const {
  return make_error("POST " + req_.url + ": " + what);
}

Result<StreamResult> StreamTransfer::finish(CURLcode code) {
  if (!failure_.empty()) return error(failure_);
  curl_easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &result_.http_status);
  if (code != CURLE_OK) {
    return error(curl_message(code, errbuf_) + " (timeout " + seconds_figure(req_.timeout_s) + " s, " +
                 std::to_string(body_bytes_) + " bytes received)");
  }
  if (result_.http_status < 200 || result_.http_status >= 300) {
    Error e = error(http_error_text(result_.http_status, error_body_));
    e.status = static_cast<int>(result_.http_status);  // the server's answer, kept as a value (flow/passes/evidence_pass.cpp)
    return e;
  }
  if (!result_.done) {
    return error("stream ended without data: [DONE] after " + std::to_string(parser_.events_dispatched()) +
                 " events and " + std::to_string(body_bytes_) + " bytes" +
                 (parser_.has_partial_event() ? ", in the middle of an event" : ""));
  }
  return std::move(result_);
}

Result<StreamResult> StreamTransfer::finish_stalled(SteadyClock::time_point now) {
  if (result_.done && failure_.empty()) return std::move(result_);
  return error("stalled: no byte for " + seconds_figure(std::chrono::duration<double>(now - last_byte_).count()) +
               " s (stall_timeout_s " + seconds_figure(req_.stall_timeout_s) + ") after " +
               std::to_string(body_bytes_) + " bytes and " + std::to_string(parser_.events_dispatched()) +
               " events");
}

}  // namespace fp
