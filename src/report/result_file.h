// The result of a run as a plain-text file that diffs cleanly against the previous run (stable
// order, one figure per line, units in the names) and as JSON with the same data.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "result/run_result.h"
#include "util/result.h"

namespace fp {

std::string result_to_text(const RunResult& r);
nlohmann::ordered_json result_to_json(const RunResult& r);
// Writes <dir>/result.json and <dir>/result.txt, each atomically, both or neither
// (util/text.h write_files_atomic); text that is still not UTF-8 here is written as U+FFFD.
Status write_result_files(const std::string& dir, const RunResult& r);

}  // namespace fp

namespace fp {

// Reads back what `accept` and `diff` need from a result.json: identity, status, verdict,
// figures with their samples, answers. Errors name the file and the field.
Result<RunResult> load_result_json(const std::string& path);

}  // namespace fp
