// Where a case's golden lives under a golden root, and the fingerprint recorded with it.
//
// Layout: <golden_root>/<fingerprint id>/fingerprint.json               the machine part
//                                       /<case>.json                    medians of launches (golden/golden_file.h)
//                                       /<case>/answers/<id>.txt        reference answers
//                                       /<case>/fingerprint.json        full fingerprint the golden came from
//                                       /<case>/verdict.json            the verdict it was recorded with
#pragma once

#include <optional>
#include <string>

#include "golden/fingerprint.h"
#include "util/result.h"

namespace fp {

// The files of one case's golden (the layout above).
struct GoldenPaths {
  std::string dir, golden_file, answers_dir;
  std::string machine_fingerprint_file, case_fingerprint_file, verdict_file;
};
// The paths of `case_name`'s golden for fingerprint `fingerprint_id` under `golden_root`.
GoldenPaths golden_paths(const std::string& golden_root, const std::string& fingerprint_id, const std::string& case_name);

// The case's recorded fingerprint: <case>/fingerprint.json, else the folder's machine part;
// nullopt when neither exists; an error when one exists but cannot be read.
Result<std::optional<Fingerprint>> load_golden_fingerprint(const GoldenPaths& paths);

}  // namespace fp
