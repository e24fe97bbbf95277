#include "runtime/attached_data.h"


#include "util/json_fields.h"
#include "runtime/runtime_data.h"
#include "util/regex.h"

namespace fp {

Result<AttachedData> load_attached_data(const std::string& runtime) {
  FP_TRY(RuntimeDataFile f, read_runtime_data(runtime));
  FP_TRY(nlohmann::json j, parse_json_object(f.text, f.path));
  AttachedData d;
  if (!j.contains("attached")) return d;
  JsonFields top(j, f.path);
  FP_TRY(JsonFields a, top.object("attached"));
  FP_TRY_STATUS(a.only_keys({"hints", "build_from_system_fingerprint", "comment"}));
  if (a.has("hints")) {
    FP_TRY(JsonFields h, a.object("hints"));
    FP_TRY_STATUS(h.only_keys({"log", "placement", "kernels"}));
    for (const auto& [level, _] : h.raw().items()) {
      FP_TRY(d.hints[level], h.string(level));
    }
  }
  FP_TRY(d.build_from_system_fingerprint, a.string_or("build_from_system_fingerprint", ""));
  if (auto re = Regex::compile(d.build_from_system_fingerprint); !re)
    return a.error("build_from_system_fingerprint", re.error().message);
  return d;
}

}  // namespace fp
