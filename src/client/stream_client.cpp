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
  Batch(const std::vector<StreamRequest>& reqs, int concurrency)
      : reqs_(reqs), concurrency_(static_cast<size_t>(std::max(concurrency, 1))),
        results_(reqs.size(), make_error("not run")) {
    order_.resize(reqs.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return reqs[a].start_at_s < reqs[b].start_at_s; });
  }

  std::vector<Result<StreamResult>> run() {
    curl_global_once();
    multi_.reset(curl_multi_init());
    if (!multi_) {
      for (auto& r : results_) r = make_error("curl_multi_init failed");
      return std::move(results_);
    }
    start_ = Clock::now();
    while (next_ < order_.size() || !in_flight_.empty()) {
      start_due();
      int running = 0;
      CURLMcode mc = curl_multi_perform(multi_.get(), &running);
      if (mc != CURLM_OK) return fail_all(curl_multi_strerror(mc));
      collect_done();
      collect_stalled();
      if (next_ == order_.size() && in_flight_.empty()) break;
      mc = curl_multi_poll(multi_.get(), nullptr, 0, poll_timeout_ms(), nullptr);
      if (mc != CURLM_OK) return fail_all(curl_multi_strerror(mc));
    }
    return std::move(results_);
  }

 private:
  Clock::time_point wanted(size_t i) const { return start_ + as_duration(reqs_[i].start_at_s); }

  void start_due() {
    while (in_flight_.size() < concurrency_ && next_ < order_.size()) {
      size_t i = order_[next_];
      if (wanted(i) > Clock::now()) return;
      ++next_;
      auto t = StreamTransfer::create(reqs_[i]);
      if (!t) {
        results_[i] = t.error();
        continue;
      }
      std::unique_ptr<StreamTransfer> transfer = std::move(t).value();
      transfer->mark_sent(Clock::now(), wanted(i), start_);
      CURL* handle = transfer->handle();
      CURLMcode mc = curl_multi_add_handle(multi_.get(), handle);
      if (mc != CURLM_OK) {
        results_[i] = make_error("POST " + reqs_[i].url + ": " + curl_multi_strerror(mc));
        continue;
      }
      in_flight_.emplace(handle, InFlight{i, std::move(transfer)});
    }
  }

  void finish(CURL* handle, Result<StreamResult> outcome) {
    auto it = in_flight_.find(handle);
    results_[it->second.index] = std::move(outcome);
    curl_multi_remove_handle(multi_.get(), handle);
    in_flight_.erase(it);
  }

  void collect_done() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto it = in_flight_.find(msg->easy_handle);
      if (it == in_flight_.end()) continue;
      CURLcode code = msg->data.result;  // msg is invalid once the handle is removed
      finish(msg->easy_handle, it->second.transfer->finish(code));
    }
  }

  void collect_stalled() {
    Clock::time_point now = Clock::now();
    std::vector<CURL*> stalled;
    for (auto& [handle, f] : in_flight_) {
      if (f.transfer->stall_deadline() <= now) stalled.push_back(handle);
    }
    for (CURL* h : stalled) finish(h, in_flight_.at(h).transfer->finish_stalled(now));
  }

  // Until the earliest stall deadline or due start, at most a second; curl shortens it further
  // when its own timers need it.
  int poll_timeout_ms() const {
    Clock::time_point now = Clock::now();
    Clock::time_point wake = now + std::chrono::seconds(1);
    for (const auto& [handle, f] : in_flight_) wake = std::min(wake, f.transfer->stall_deadline());
    if (in_flight_.size() < concurrency_ && next_ < order_.size()) wake = std::min(wake, wanted(order_[next_]));
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
    return static_cast<int>(std::max<long long>(ms, 0));
  }

  std::vector<Result<StreamResult>> fail_all(const char* why) {
    for (auto& [handle, f] : in_flight_) {
      results_[f.index] = make_error("POST " + reqs_[f.index].url + ": curl multi: " + why);
      curl_multi_remove_handle(multi_.get(), handle);
    }
    in_flight_.clear();
    for (; next_ < order_.size(); ++next_) results_[order_[next_]] = make_error(std::string("not started: ") + why);
    return std::move(results_);
  }

  struct InFlight {
    size_t index;
    std::unique_ptr<StreamTransfer> transfer;
  };

  const std::vector<StreamRequest>& reqs_;
  size_t concurrency_;
  std::vector<Result<StreamResult>> results_;
  std::vector<size_t> order_;  // request indices by start_at_s
  size_t next_ = 0;            // next position in order_ to start
  std::unique_ptr<CURLM, CurlMultiDeleter> multi_;
  std::map<CURL*, InFlight> in_flight_;
  Clock::time_point start_;
};

}  // namespace

Result<StreamResult> stream_request(const StreamRequest& req) {
  std::vector<StreamRequest> one{req};
  one[0].start_at_s = 0;
  std::vector<Result<StreamResult>> results = Batch(one, 1).run();
  return std::move(results.front());
}

std::vector<Result<StreamResult>> stream_concurrent(const std::vector<StreamRequest>& reqs, int concurrency) {
  return Batch(reqs, concurrency).run();
}

}  // namespace fp
