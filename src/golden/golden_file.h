// One golden per case per machine fingerprint: the timing figures a run is compared against (reference
// answers live apart, see golden/answers.h). JSON, written only by an explicit record (`run
// --record-missing`) or accept, read strictly: a truncated, corrupt or schema-violating file is an
// error, never a default. How a run is judged against it: golden/threshold_policy.h.
//
// Schema (version 4), keys always written in this order so the file diffs cleanly:
//   {
//     "schema_version": 4,
//     "fingerprint": "<machine fingerprint id>",
//     "spread_kind": "mad_of_launch_medians", // spread = raw MAD of the per-launch medians
//     "figures": {                          // by figure name, sorted
//       "ttft_ms_p95": {
//         "median": 41.5,                   // median of the launch medians, figure's unit
//         "spread": 1.25,                   // raw MAD of the launch medians, figure's unit, >= 0
//         "n": 5,                           // launches (each a cold start of the runtime), >= 1
//         "direction": "lower_is_better",   // or "higher_is_better"
//         "gate": true,                     // whether the job fails on this figure
//         "band_source": "launches"         // where median and spread came from (BandSource below)
//       },
//       "memory.kv_cache_mib.CPU": {...}    // memory figures: same keys, judged by golden/memory_policy.h
//     },
//     "kernel_families": {                  // attention kernels by family (runtime data), sorted; {}: none
//       "fattn-mma": {                      // recorded (no kernel probe where the golden was recorded)
//         "fused": true,                    // a fused attention family (false: unfused, e.g. soft_max)
//         "share_median": 0.43,             // median share of the attention GPU time over the probed launches
//         "share_spread": 0.002,            // raw MAD of those shares, >= 0
//         "n": 6                            // probed launches (evidence pass and probed checks), >= 1
//       }
//     }
//   }
// Every key is required; unknown keys are rejected (a misspelt key must not silently vanish).
// Version 3 (no band_source) loads with band_source "launches" for every figure; version 2 (no
// kernel_families either) with no kernel set. Version 1 (one launch's samples, fixed tolerances) is
// rejected with how to re-record.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace fp {

inline constexpr int kGoldenSchemaVersion = 4;

// Where a golden figure's median and spread (its noise band) came from:
//   launches          fresh launches of the runtime in one sitting (`run --record-missing`, accept of a
//                     run of several launches); what one sitting cannot see is added when compared
//   launches-widened  the same, with the spread already widened for what one sitting cannot see
//   rounds            separated rounds of requests in one run against a server something else
//                     started (an attached case cannot be relaunched)
//   nights            one value per nightly run, from the history (results/history.tsv)
enum class BandSource { launches, launches_widened, rounds, nights };
const char* to_string(BandSource s);
std::optional<BandSource> parse_band_source(std::string_view s);

enum class Direction { lower_is_better, higher_is_better };
const char* to_string(Direction d);
std::optional<Direction> parse_direction(std::string_view s);

// Thresholds for one figure.
struct GoldenFigure {
  double median = 0;  // median of the launch medians
  double spread = 0;  // raw MAD of the launch medians (not scaled to a standard deviation)
  size_t n = 0;       // launches
  Direction direction = Direction::lower_is_better;
  bool gate = false;
  BandSource band_source = BandSource::launches;
};

// One attention kernel family's share of the attention GPU time (golden/kernel_families.h).
struct GoldenKernelFamily {
  bool fused = true;
  double share_median = 0;  // 0..1
  double share_spread = 0;  // raw MAD of the per-launch shares
  size_t n = 0;             // probed launches
};

struct Golden {
  int schema_version = kGoldenSchemaVersion;  // as read (2, 3 or 4); always written as kGoldenSchemaVersion
  std::string fingerprint;
  std::map<std::string, GoldenFigure> figures;  // by figure name
  std::map<std::string, GoldenKernelFamily> kernel_families;  // by family; empty: no kernel set
};

// Reads and validates a golden file. Errors name the file, the field and the value.
Result<Golden> load_golden(const std::string& path);
// Same, from text; `origin` names the source in error messages.
Result<Golden> parse_golden(std::string_view text, const std::string& origin);
// Checks every constraint of the schema above (what load_golden enforces).
Status validate_golden(const Golden& golden, const std::string& origin);
// The file's content: 2-space indented JSON in the fixed key order, ending with a newline.
std::string golden_to_json(const Golden& golden);
// Validates, then writes through write_file_atomic (temporary file, fsync, rename).
Status save_golden_atomic(const std::string& path, const Golden& golden);

}  // namespace fp
