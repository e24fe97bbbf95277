// The runtime's own metrics (measure/server_gauges.h) in words, beside flashproof's figures.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/server_gauges.h"

namespace fp {

// One line each: what the server's gauges peaked at (and which it does not expose), its token
// counters against flashproof's own counts, and, when the phase queued requests or filled the KV
// cache, that its timings include waiting. `phase` names it ("timed runs", "sustained phase").
std::vector<std::string> server_gauges_lines(const ServerGauges& g, const std::string& phase);
nlohmann::ordered_json server_gauges_json(const ServerGauges& g);
ServerGauges server_gauges_from_json(const nlohmann::json& j);

// Several launches' gauges as one: peaks the highest, counters and own counts added.
void merge_server_gauges(ServerGauges& into, const ServerGauges& more);

}  // namespace fp
