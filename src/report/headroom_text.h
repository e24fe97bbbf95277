// The headroom (measure/kv_headroom.h) as result.txt lines, result.json's "headroom" object and the
// A/B report's sentences: one wording for every report.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "measure/kv_headroom.h"

namespace fp {

// "headroom.kv_bytes_per_token" = "512 (2 layers x 2 KV heads x head size 32, K f16, V f16)", ...; one
// line "headroom" = "not computed: WHY" when there is none.
std::vector<std::pair<std::string, std::string>> headroom_lines(const std::optional<Headroom>& h, const std::string& why_not);

// The same as JSON: numbers as numbers, {"not_computed": WHY} when there is none.
nlohmann::ordered_json headroom_json(const std::optional<Headroom>& h, const std::string& why_not);

// Back from result.json's "headroom" (the HTML report reads result files): none, with why, for
// {"not_computed": WHY}, an absent object ("not recorded: the result predates headroom") or a malformed one.
std::optional<Headroom> headroom_from_json(const nlohmann::json& j, std::string* why_not);

// The deployed context's failure of `flashproof run` for a case with a "headroom" block: "deployed
// context N does not fit beside WHO: M tokens fit, short by K tokens (X MiB of KV cache at B
// bytes/token)", or why it was not checked (no headroom, no memory left measured: no evidence is no
// pass); none when it fits.
std::optional<std::string> deployed_context_failure(const std::optional<Headroom>& h, const std::string& why_not);

// A/B: what the flag does to the compute buffer and the KV cache, and what that is in tokens of
// context: "the flag on changes the compute buffer by -68.000 MiB (87.000 -> 19.000): 4352 tokens of
// KV cache at 16384 bytes each; KV cache unchanged (32.000 MiB)". Empty when either arm lacks it.
std::vector<std::string> flag_memory_change(const std::optional<Headroom>& off, const std::optional<Headroom>& on);

}  // namespace fp
