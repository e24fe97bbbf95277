// What `flashproof support` prints and writes: a plain-text table, one row per shape x K/V pair x KV
// length x batch x device (supported yes/no), that diffs cleanly between two builds; a summary per
// device (the "no" rows folded); and the same as JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/ggml_query_runner.h"
#include "support/support_plan.h"

namespace fp {

struct SupportRun {
  SupportPlan plan;
  BackendReply reply;
  std::string runtime_how_found;  // which variable or file named the runtime
  std::string libggml;            // the library asked
  std::vector<std::string> sources;  // what the shapes came from, one line each
  std::vector<std::string> notes;    // the sources' notes (a case's slots, its context from the model)
};

// The header lines (ggml, devices, timing), the table, the summary, the notes.
std::string support_text(const SupportRun& run);
// Only the rows: the part two builds' outputs are diffed on.
std::string support_rows_text(const SupportRun& run);
// Per device: "supported N of M", then each model with "no" answers folded into the K/V pairs,
// lengths and batches they hold for ("no for kv q4_1, q5_1; every kv length; batch 512").
std::string support_summary_text(const SupportRun& run);
nlohmann::json support_json(const SupportRun& run);

}  // namespace fp
