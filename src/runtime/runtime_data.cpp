#include "runtime/runtime_data.h"

#include <cstdlib>

#include "util/shipped_data.h"
#include "util/text.h"

namespace fp {

std::string runtime_data_dir() {
  const char* env = std::getenv("FLASHPROOF_DATA_DIR");
  if (env && *env) return env;
  return shipped_data_dir() + "/runtime";
}

Result<RuntimeDataFile> read_runtime_data(const std::string& runtime) {
  if (runtime.empty() || runtime.find('/') != std::string::npos || runtime[0] == '.')
    return make_error("runtime name " + quote(runtime) + " is not a plain file stem (e.g. llama-server)");
  return read_runtime_data(runtime, runtime_data_dir() + "/" + runtime + ".json");
}

Result<RuntimeDataFile> read_runtime_data(const std::string& runtime, const std::string& path) {
  auto text = read_file(path);
  if (!text) return make_error("runtime data for " + quote(runtime) + ": " + text.error().message);
  return RuntimeDataFile{runtime, path, *text};
}

namespace {

Result<RuntimeSignatures> parse(const RuntimeDataFile& f) {
  return parse_runtime_signatures(f.text, f.path, f.runtime,
                                  [](const std::string& other) { return load_runtime_signatures(other); });
}

}  // namespace

Result<RuntimeSignatures> load_runtime_signatures(const std::string& runtime) {
  FP_TRY(RuntimeDataFile f, read_runtime_data(runtime));
  return parse(f);
}

Result<RuntimeSignatures> load_runtime_signatures(const std::string& runtime, const std::string& path) {
  FP_TRY(RuntimeDataFile f, read_runtime_data(runtime, path));
  return parse(f);
}

}  // namespace fp
