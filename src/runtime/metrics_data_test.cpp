#include "runtime/metrics_data.h"

#include <gtest/gtest.h>

#include "util/text.h"

namespace fp {
namespace {

nlohmann::json shipped() {
  auto text = read_file(std::string(FLASHPROOF_SOURCE_DIR) + "/src/runtime/data/llama-server.json");
  EXPECT_TRUE(text) << text.error().message;
  return nlohmann::json::parse(*text)["metrics"];
}

// The shipped entry self-tests: its example (a real scrape of build 11669) holds every named
// metric but the one the build lacks.
TEST(MetricsData, LlamaServerEntryMatchesItsRecordedScrape) {
  auto d = parse_metrics_data(shipped(), "llama-server.json: metrics");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->present);
  EXPECT_EQ(d->path, "/metrics");
  EXPECT_EQ(d->launch_args, std::vector<std::string>{"--metrics"});
  EXPECT_EQ(d->names.at("requests_deferred"), "llamacpp:requests_deferred");
  EXPECT_EQ(d->names.at("predicted_tokens"), "llamacpp:tokens_predicted_total");
}

TEST(MetricsData, ErrorsNameTheFieldAndWhatIsValid) {
  auto j = shipped();
  j["names"]["queue_depth"] = "x";
  auto r = parse_metrics_data(j, "f.json: metrics");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("f.json: metrics.names.queue_depth: unknown role; valid: requests_processing"), std::string::npos)
      << r.error().message;
  j = shipped();
  j["names"]["requests_processing"] = "llamacpp:requests_in_flight";
  r = parse_metrics_data(j, "f.json: metrics");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("\"llamacpp:requests_in_flight\" is not in the example"), std::string::npos) << r.error().message;
  j = shipped();
  j["example_lacks"] = {"kv_cache_usage_ratio", "requests_deferred"};
  r = parse_metrics_data(j, "f.json: metrics");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is in the example, but example_lacks names it"), std::string::npos) << r.error().message;
  j = shipped();
  j["path"] = "metrics";
  EXPECT_FALSE(parse_metrics_data(j, "f.json: metrics"));
  j = shipped();
  j["example"] = "llamacpp:requests_processing one\n";
  r = parse_metrics_data(j, "f.json: metrics");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("f.json: metrics.example: line 1"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace fp
