#include "client/metrics_scraper.h"

#include <algorithm>
#include <chrono>

#include "client/http_client.h"
#include "util/text.h"

namespace fp {

MetricsScraper::MetricsScraper(const std::string& base_url, MetricsData data, double interval_s)
    : data_(std::move(data)), interval_s_(interval_s) {
  g_.endpoint = base_url + data_.path;
}

MetricsScraper::~MetricsScraper() {
  if (thread_.joinable()) stop();
}

void MetricsScraper::scrape() {
  auto r = http_get(g_.endpoint, 5.0);
  std::string error;
  if (!r) error = r.error().message;
  else if (r->status != 200)
    error = "HTTP " + std::to_string(r->status) + (data_.launch_args.empty() ? std::string()
                                                                              : " (the runtime turns it on with " + join(data_.launch_args, " ") + ")");
  std::optional<PromText> text;
  if (error.empty()) {
    auto t = parse_prometheus_text(r->body, g_.endpoint);
    if (t) text = std::move(*t);
    else error = t.error().message;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!text) {
    ++g_.failed_scrapes;
    g_.last_error = error;
    return;
  }
  ++g_.scrapes;
  for (const auto& [role, name] : data_.names) {
    auto v = text->value(name);
    if (!v) continue;
    if (metric_role_is_counter(role)) {
      first_.emplace(role, *v);
      last_[role] = *v;
    } else {
      auto it = g_.peaks.find(role);
      if (it == g_.peaks.end()) g_.peaks[role] = *v;
      else it->second = std::max(it->second, *v);
    }
  }
}

void MetricsScraper::start() {
  scrape();
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      if (cv_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return stopping_; })) break;
      lock.unlock();
      scrape();
      lock.lock();
    }
  });
}

ServerGauges MetricsScraper::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  scrape();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [role, v] : last_) g_.growth[role] = v - first_[role];
  for (const auto& [role, name] : data_.names)
    if (!g_.peaks.count(role) && !g_.growth.count(role)) g_.not_exposed.push_back(role);
  return g_;
}

}  // namespace fp
