// "Active, degraded" in one line for the reports of ab and matrix: the runtime's words, cause,
// level 3's cost and remedy (result.txt, result.json and the HTML write the fields one by one).
#pragma once

#include <string>

#include "evidence/verdict_types.h"

namespace fp {

// "active, degraded: <cause> (the runtime: "<line>"); cost: converting the KV cache 3.1% of GPU time
// (<kernel>). Remedy: <remedy>".
std::string degradation_text(const Degradation& d);

}  // namespace fp
