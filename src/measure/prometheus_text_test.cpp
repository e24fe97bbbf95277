#include "measure/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fp {
namespace {

// Part of llama-server's /metrics (Debian build 11669, --metrics, after one request).
constexpr const char* kLlamaServer = R"(# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 13
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 8
# HELP llamacpp:prompt_tokens_seconds Average prompt throughput in tokens/s
# TYPE llamacpp:prompt_tokens_seconds gauge
llamacpp:prompt_tokens_seconds 25.2599
# HELP llamacpp:requests_processing Number of requests processing
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 0
# HELP llamacpp:requests_deferred Number of requests deferred
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 0
)";

TEST(PrometheusText, ReadsLlamaServerMetrics) {
  auto t = parse_prometheus_text(kLlamaServer, "metrics");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->samples.size(), 5u);
  EXPECT_EQ(t->value("llamacpp:prompt_tokens_total"), 13.0);
  EXPECT_EQ(t->value("llamacpp:tokens_predicted_total"), 8.0);
  EXPECT_DOUBLE_EQ(*t->value("llamacpp:prompt_tokens_seconds"), 25.2599);
  EXPECT_EQ(t->types.at("llamacpp:requests_deferred"), "gauge");
  EXPECT_EQ(t->types.at("llamacpp:prompt_tokens_total"), "counter");
  EXPECT_FALSE(t->value("llamacpp:kv_cache_usage_ratio"));  // not exposed by this build
}

TEST(PrometheusText, LabelsTimestampsAndSpecialValues) {
  auto t = parse_prometheus_text("vllm:num_requests_waiting{engine=\"0\",model_name=\"m \\\"q\\\"\"} 3 1700000000000\n"
                                 "x_inf +Inf\nx_nan NaN\nx_neg -1.5e3\n# a plain comment\n\n",
                                 "metrics");
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->samples.size(), 4u);
  EXPECT_EQ(t->samples[0].labels.at("engine"), "0");
  EXPECT_EQ(t->samples[0].labels.at("model_name"), "m \"q\"");
  EXPECT_EQ(t->samples[0].value, 3.0);
  EXPECT_TRUE(std::isinf(t->samples[1].value));
  EXPECT_TRUE(std::isnan(t->samples[2].value));
  EXPECT_EQ(t->samples[3].value, -1500.0);
}

TEST(PrometheusText, MalformedLinesNameTheLine) {
  for (const char* bad : {"9metric 1", "metric", "metric one", "metric{a=1} 2", "metric{a=\"1\" 2", "m 1 2 3"}) {
    auto t = parse_prometheus_text(std::string("ok 1\n") + bad + "\n", "http://127.0.0.1:8080/metrics");
    ASSERT_FALSE(t) << bad;
    EXPECT_NE(t.error().message.find("http://127.0.0.1:8080/metrics: line 2: "), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find("expected"), std::string::npos) << t.error().message;
  }
}

}  // namespace
}  // namespace fp
