// Scrapes a runtime's metrics endpoint (runtime/metrics_data.h) on a thread while a phase runs:
// once at start, every `interval_s`, once at stop. The peaks of the gauges and the growth of the
// counters come back as ServerGauges (measure/server_gauges.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "measure/prometheus_text.h"
#include "measure/server_gauges.h"
#include "runtime/metrics_data.h"

namespace fp {

class MetricsScraper {
 public:
  MetricsScraper(const std::string& base_url, MetricsData data, double interval_s = 0.2);
  ~MetricsScraper();
  MetricsScraper(const MetricsScraper&) = delete;
  MetricsScraper& operator=(const MetricsScraper&) = delete;

  void start();
  ServerGauges stop();

 private:
  void scrape();
  MetricsData data_;
  double interval_s_;
  ServerGauges g_;
  std::map<std::string, double> first_, last_;  // counter role -> value
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fp
