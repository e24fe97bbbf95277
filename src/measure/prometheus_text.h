// The Prometheus text exposition format (a runtime's metrics endpoint, e.g. llama-server
// --metrics at /metrics): one sample per line, `name{label="value",...} value [timestamp]`, with
// `# HELP` and `# TYPE` comments. Only what the harness reads: names, labels, values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace fp {

struct PromSample {
  std::string name;                           // "llamacpp:requests_processing"
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0;                           // NaN and +Inf/-Inf as the format writes them
};

struct PromText {
  std::vector<PromSample> samples;           // in text order
  std::map<std::string, std::string> types;  // name -> counter | gauge | histogram | summary | untyped (# TYPE)

  // The value of the first sample named `name` (any labels); none when absent.
  std::optional<double> value(const std::string& name) const;
};

// Parses exposition text. A malformed line is an error naming `source`, the line number, the line
// and what was expected; comments other than HELP and TYPE, and blank lines, are skipped.
Result<PromText> parse_prometheus_text(std::string_view text, const std::string& source);

}  // namespace fp
