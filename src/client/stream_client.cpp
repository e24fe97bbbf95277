#include "client/stream_client.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>

#include "client/stream_transfer.h"

namespace fp {
namespace {

struct CurlMultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};

using Clock = SteadyClock;

Clock::duration as_duration(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// Runs reqs on one multi handle; see stream_concurrent.
class Batch {
 public:
  Batch(const std::vector<StreamRequest>& reqs, int concurrency, const BatchOptions& options)
      : reqs_(reqs), concurrency_(static_cast<size_t>(std::max(concurrency, 1))), options_(options) {
    out_.results.assign(reqs.size(), make_error("not run"));
    out_.fates.assign(reqs.size(), RequestFate::not_sent);
    order_.resize(reqs.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return reqs[a].start_at_s < reqs[b].start_at_s; });
  }

  BatchOutcome run() {
    curl_global_once();
    multi_.reset(curl_multi_init());
    if (!multi_) {
      for (auto& r : out_.results) r = make_error("curl_multi_init failed");
      out_.fates.assign(out_.results.size(), RequestFate::failed);
      return std::move(out_);
    }
    start_ = Clock::now();
    while (next_ < order_.size() || !in_flight_.empty()) {
      if (stop_starting()) break;
      start_due();
      int running = 0;
      CURLMcode mc = curl_multi_perform(multi_.get(), &running);
      if (mc != CURLM_OK) return fail_all(curl_multi_strerror(mc));
      collect_done();
      collect_stalled();
      if (!out_.unanswered.empty()) {
        give_up_in_flight();
        break;
      }
      if (next_ == order_.size() && in_flight_.empty()) break;
      if (stop_starting()) break;  // the start limit passed with nothing in flight: no need to wait
      mc = curl_multi_poll(multi_.get(), nullptr, 0, poll_timeout_ms(), nullptr);
      if (mc != CURLM_OK) return fail_all(curl_multi_strerror(mc));
    }
    for (; next_ < order_.size(); ++next_) mark_unsent(order_[next_]);
    return std::move(out_);
  }

 private:
  // Past the batch's start limit with nothing in flight: the rest are not due.
  bool stop_starting() const {
    return options_.start_until_s >= 0 && in_flight_.empty() && Clock::now() > start_ + as_duration(options_.start_until_s);
  }

  void mark_unsent(size_t i) {
    if (!out_.unanswered.empty()) {
      out_.fates[i] = RequestFate::not_sent;
      out_.results[i] = make_error("not sent: the server had stopped answering (" + out_.unanswered + ")");
    } else {
      out_.fates[i] = RequestFate::not_due;
      out_.results[i] =
          make_error("not sent: its turn came after the batch's last start (" + std::to_string(options_.start_until_s) + " s)");
    }
  }

  void give_up_in_flight() {
    for (auto& [handle, f] : in_flight_) {
      out_.results[f.index] =
          make_error("POST " + reqs_[f.index].url + ": given up: the server had stopped answering (" + out_.unanswered + ")");
      out_.fates[f.index] = RequestFate::given_up;
      curl_multi_remove_handle(multi_.get(), handle);
    }
    in_flight_.clear();
  }
  Clock::time_point wanted(size_t i) const { return start_ + as_duration(reqs_[i].start_at_s); }

  void start_due() {
    while (in_flight_.size() < concurrency_ && next_ < order_.size()) {
      size_t i = order_[next_];
      if (wanted(i) > Clock::now()) return;
      if (options_.start_until_s >= 0 && Clock::now() > start_ + as_duration(options_.start_until_s)) return;
      ++next_;
      auto t = StreamTransfer::create(reqs_[i]);
      if (!t) {
        out_.results[i] = t.error();
        out_.fates[i] = RequestFate::failed;
        continue;
      }
      std::unique_ptr<StreamTransfer> transfer = std::move(t).value();
      transfer->mark_sent(Clock::now(), wanted(i), start_);
      CURL* handle = transfer->handle();
      CURLMcode mc = curl_multi_add_handle(multi_.get(), handle);
      if (mc != CURLM_OK) {
        out_.results[i] = make_error("POST " + reqs_[i].url + ": " + curl_multi_strerror(mc));
        out_.fates[i] = RequestFate::failed;
        continue;
      }
      in_flight_.emplace(handle, InFlight{i, std::move(transfer)});
    }
  }

  void finish(CURL* handle, Result<StreamResult> outcome, RequestFate fate) {
    auto it = in_flight_.find(handle);
    const size_t i = it->second.index;
    if (outcome) fate = RequestFate::answered;
    if (fate_stops_batch(fate) && out_.unanswered.empty() && options_.stop_when_unanswered) {
      out_.unanswered = outcome.error().message;
      out_.unanswered_index = i;
      out_.unanswered_at_s = std::chrono::duration<double>(Clock::now() - start_).count();
    }
    out_.results[i] = std::move(outcome);
    out_.fates[i] = fate;
    curl_multi_remove_handle(multi_.get(), handle);
    in_flight_.erase(it);
  }

  // A transfer that ended in one of these never got an answer from a live server.
  static bool server_gone(CURLcode code) {
    return code == CURLE_COULDNT_CONNECT || code == CURLE_GOT_NOTHING || code == CURLE_SEND_ERROR || code == CURLE_RECV_ERROR;
  }

  void collect_done() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto it = in_flight_.find(msg->easy_handle);
      if (it == in_flight_.end()) continue;
      CURLcode code = msg->data.result;  // msg is invalid once the handle is removed
      finish(msg->easy_handle, it->second.transfer->finish(code), server_gone(code) ? RequestFate::unreachable : RequestFate::failed);
    }
  }

  void collect_stalled() {
    Clock::time_point now = Clock::now();
    std::vector<CURL*> stalled;
    for (auto& [handle, f] : in_flight_) {
      if (f.transfer->stall_deadline() <= now) stalled.push_back(handle);
    }
    for (CURL* h : stalled) finish(h, in_flight_.at(h).transfer->finish_stalled(now), RequestFate::stalled);
  }

  // Until the earliest stall deadline or due start, at most a second; curl shortens it further
  // when its own timers need it.
  int poll_timeout_ms() const {
    Clock::time_point now = Clock::now();
    Clock::time_point wake = now + std::chrono::seconds(1);
    for (const auto& [handle, f] : in_flight_) wake = std::min(wake, f.transfer->stall_deadline());
    const bool may_start = options_.start_until_s < 0 || now <= start_ + as_duration(options_.start_until_s);
    if (may_start && in_flight_.size() < concurrency_ && next_ < order_.size()) wake = std::min(wake, wanted(order_[next_]));
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
    return static_cast<int>(std::max<long long>(ms, 0));
  }

  BatchOutcome fail_all(const char* why) {
    for (auto& [handle, f] : in_flight_) {
      out_.results[f.index] = make_error("POST " + reqs_[f.index].url + ": curl multi: " + why);
      out_.fates[f.index] = RequestFate::failed;
      curl_multi_remove_handle(multi_.get(), handle);
    }
    in_flight_.clear();
    for (; next_ < order_.size(); ++next_) {
      out_.results[order_[next_]] = make_error(std::string("not started: ") + why);
      out_.fates[order_[next_]] = RequestFate::failed;
    }
    return std::move(out_);
  }

  struct InFlight {
    size_t index;
    std::unique_ptr<StreamTransfer> transfer;
  };

  const std::vector<StreamRequest>& reqs_;
  size_t concurrency_;
  BatchOptions options_;
  BatchOutcome out_;
  std::vector<size_t> order_;  // request indices by start_at_s
  size_t next_ = 0;            // next position in order_ to start
  std::unique_ptr<CURLM, CurlMultiDeleter> multi_;
  std::map<CURL*, InFlight> in_flight_;
  Clock::time_point start_;
};

}  // namespace

const char* fate_name(RequestFate f) {
  switch (f) {
    case RequestFate::answered: return "answered";
    case RequestFate::failed: return "failed";
    case RequestFate::stalled: return "stalled";
    case RequestFate::unreachable: return "unreachable";
    case RequestFate::given_up: return "given up";
    case RequestFate::not_sent: return "not sent";
    case RequestFate::not_due: return "not due";
  }
  return "?";
}

size_t BatchOutcome::count(RequestFate f) const { return static_cast<size_t>(std::count(fates.begin(), fates.end(), f)); }

Result<StreamResult> stream_request(const StreamRequest& req) {
  std::vector<StreamRequest> one{req};
  one[0].start_at_s = 0;
  BatchOutcome out = Batch(one, 1, BatchOptions{}).run();
  return std::move(out.results.front());
}

BatchOutcome stream_batch(const std::vector<StreamRequest>& reqs, int concurrency, const BatchOptions& options) {
  return Batch(reqs, concurrency, options).run();
}

std::vector<Result<StreamResult>> stream_concurrent(const std::vector<StreamRequest>& reqs, int concurrency) {
  return stream_batch(reqs, concurrency).results;
}

}  // namespace fp
