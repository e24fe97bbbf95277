// What flashproof can see of a server it did not start, read from the "attached" part of
// src/runtime/data/<runtime>.json: why each evidence level may be unavailable there (the runtime's
// own wording of what to turn on), and how its answers name its build.
#pragma once

#include <map>
#include <string>

#include "util/result.h"

namespace fp {

struct AttachedData {
  std::map<std::string, std::string> hints;  // "log" / "placement" / "kernels" -> why unavailable, what to do
  std::string build_from_system_fingerprint;  // regex, group 1 the build ("^b([0-9]+)"); "" none
};

// The runtime's "attached" part; empty (no hints) when its data file has none.
Result<AttachedData> load_attached_data(const std::string& runtime);

}  // namespace fp
