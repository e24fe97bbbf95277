// The runtime data files (src/runtime/data/<runtime>.json, installed as share/flashproof/runtime/, or
// the folder $FLASHPROOF_DATA_DIR names):
// where they are and how they are read. Each part gets its own section passed in as text: the
// adapter (runtime/adapter.h) reads "adapter", the evidence parser (evidence/runtime_signatures.h)
// gets "evidence" without ever opening a file.
#pragma once

#include <string>

#include "evidence/runtime_signatures.h"
#include "util/result.h"

namespace fp {

// Folder of runtime data files: $FLASHPROOF_DATA_DIR if set, else share/flashproof/runtime
// (util/shipped_data.h: installed, or the build tree's link to src/runtime/data).
std::string runtime_data_dir();

struct RuntimeDataFile {
  std::string runtime;  // file stem, e.g. llama-server
  std::string path;
  std::string text;
};

// Reads <runtime_data_dir()>/<runtime>.json; the runtime must be a plain file stem.
Result<RuntimeDataFile> read_runtime_data(const std::string& runtime);
// Reads the file at path, naming it `runtime`.
Result<RuntimeDataFile> read_runtime_data(const std::string& runtime, const std::string& path);

// Loads and validates the runtime's evidence signatures (a "same_as" runtime is read from the
// same folder).
Result<RuntimeSignatures> load_runtime_signatures(const std::string& runtime);
// The same from the file at path.
Result<RuntimeSignatures> load_runtime_signatures(const std::string& runtime, const std::string& path);

}  // namespace fp
