// The report of an A/B run (result/ab_run.h): ab.txt (headlines first: the decision, the job's
// gates, the answers, the stated mechanism, differences nobody predicted; then every figure) and
// ab.json with the same data. Stable order, no timestamps in ab.txt: two A/B reports of the same
// case diff cleanly. The words of the run's typed outcomes are made here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "result/ab_run.h"
#include "util/result.h"

namespace fp {

const char* to_string(AbEffect e);          // "within noise", "better with the flag on", "worse with the flag on"
const char* to_string(MechanismVerdict v);  // "confirmed", "not shown", ...
const char* to_string(AbGateOutcome o);     // "pass", "fail", "undecided"

std::string ab_to_text(const AbRun& r);
nlohmann::ordered_json ab_to_json(const AbRun& r);
// Writes <dir>/ab.txt and <dir>/ab.json atomically.
Status write_ab_files(const std::string& dir, const AbRun& r);

}  // namespace fp
