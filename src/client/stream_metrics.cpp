#include "client/stream_metrics.h"

#include <string>

namespace fp {

Result<double> tpot_s(const StreamResult& r) {
  if (r.completion_tokens < 2) {
    return make_error("TPOT needs usage.completion_tokens >= 2, got " + std::to_string(r.completion_tokens) +
                      " (-1: the stream carried no usage)");
  }
  if (r.ttft_s < 0 || r.e2e_s < r.ttft_s) {
    return make_error("TPOT needs a measured TTFT and end-to-end time, got ttft " + std::to_string(r.ttft_s) +
                      " s, e2e " + std::to_string(r.e2e_s) + " s");
  }
  return (r.e2e_s - r.ttft_s) / (r.completion_tokens - 1);
}

std::vector<double> inter_event_gaps_s(const StreamResult& r) {
  std::vector<double> gaps;
  const auto& t = r.content_event_times_s;
  for (size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
  return gaps;
}

}  // namespace fp
