// What a runtime's own metrics said over one phase (timed runs, a sustained phase): the peaks of
// its gauges and the growth of its token counters, beside flashproof's own counts. Data only; the
// scraping is client/metrics_scraper.h, the words report/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fp {

struct ServerGauges {
  std::string endpoint;                      // "http://127.0.0.1:8080/metrics"
  int scrapes = 0, failed_scrapes = 0;
  std::string last_error;                    // of a failed scrape
  std::map<std::string, double> peaks;       // gauge role -> highest value seen (metric_roles())
  std::map<std::string, double> growth;      // counter role -> last minus first scrape
  std::vector<std::string> not_exposed;      // roles whose metric the server did not expose
  // flashproof's own counts over the same requests (the usage of every answer); own_known false
  // when an answer did not state its usage
  long long own_prompt_tokens = 0, own_output_tokens = 0;
  bool own_known = true;

  bool measured() const { return scrapes >= 2; }
  // The phase queued requests (requests_deferred above 0) or filled the KV cache (usage ratio 1).
  bool queued() const { auto it = peaks.find("requests_deferred"); return it != peaks.end() && it->second > 0; }
  bool kv_cache_full() const { auto it = peaks.find("kv_cache_usage_ratio"); return it != peaks.end() && it->second >= 0.999; }
};

}  // namespace fp
