// Reading result.json, ab.json and matrix.json leniently for the HTML report: a missing or
// mistyped key gives the fallback, so a report of an older results tree still renders.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "measure/stats.h"
#include "util/result.h"

namespace fp::html {

// The value at `path` as text (a string as is, another value as JSON), `fallback` when absent or null.
std::string str(const nlohmann::json& j, std::initializer_list<const char*> path, const std::string& fallback = "");

// The number at `key`, `fallback` (not a number by default) when absent or not a number.
double dbl(const nlohmann::json& j, const char* key, double fallback = kNoValue);

// The strings of the array at `key`; other entries and a missing key give nothing.
std::vector<std::string> strings(const nlohmann::json& j, const char* key);

// A figure's finite samples (its "samples" array).
std::vector<double> samples_of(const nlohmann::json& fig);

// Whether a figure improves downward, read from its "direction" (lower is better when absent).
bool lower_is_better(const nlohmann::json& fig);

// A JSON object read from `path`; an error naming the file when it is not one (truncated or corrupt).
Result<nlohmann::json> read_json(const std::string& path);

}  // namespace fp::html
