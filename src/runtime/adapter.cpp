#include "runtime/adapter.h"

#include <cstdlib>
#include <regex>

#include "case/json_fields.h"
#include "runtime/runtime_data.h"
#include "util/text.h"

namespace fp {

Result<Adapter> load_adapter(const std::string& runtime) {
  if (runtime.empty() || runtime.find('/') != std::string::npos || runtime[0] == '.')
    return make_error("runtime " + quote(runtime) + ": not a plain file stem (e.g. llama-server)");
  return load_adapter_file(runtime_data_dir() + "/" + runtime + ".json", runtime);
}

Result<Adapter> load_adapter_file(const std::string& path, const std::string& runtime) {
  auto file = read_runtime_data(runtime, path);
  if (!file) return make_error("runtime " + quote(runtime) + ": no runtime data file: " + file.error().message);
  FP_TRY(nlohmann::json j, parse_json_object(file->text, path));
  JsonFields top(j, path);
  FP_TRY(JsonFields a, top.object("adapter"));
  FP_TRY_STATUS(a.only_keys({"executable_var", "executable_name", "health_path", "ready_paths", "chat_path", "completion_path",
                             "version_args", "version_regex", "build_regex", "timed_args", "evidence_args",
                             "evidence_env", "port_in_use_regex", "request_extras", "list_devices_args", "comment"}));
  Adapter ad;
  ad.name = runtime;
  ad.data_file = path;
  FP_TRY(ad.executable_var, a.string("executable_var"));
  FP_TRY(ad.executable_name, a.string("executable_name"));
  FP_TRY(ad.health_path, a.string("health_path"));
  FP_TRY(ad.chat_path, a.string("chat_path"));
  FP_TRY(ad.completion_path, a.string("completion_path"));
  if (a.has("ready_paths")) {
    FP_TRY(ad.ready_paths, a.string_list("ready_paths"));
    if (ad.ready_paths.empty()) return a.error("ready_paths", "empty; expected the paths that answer 200 once the runtime is ready, e.g. [\"/health\", \"/v1/models\"]");
  } else {
    ad.ready_paths = {ad.health_path};
  }
  std::vector<const std::string*> paths = {&ad.health_path, &ad.chat_path, &ad.completion_path};
  for (const auto& p : ad.ready_paths) paths.push_back(&p);
  for (const auto* p : paths)
    if (!starts_with(*p, "/")) return a.error("", "endpoint paths must start with '/': " + quote(*p));
  FP_TRY(ad.version_args, a.string_list("version_args"));
  FP_TRY(ad.version_regex, a.string("version_regex"));
  FP_TRY(ad.build_regex, a.string("build_regex"));
  FP_TRY(ad.timed_args, a.string_list("timed_args"));
  FP_TRY(ad.evidence_args, a.string_list("evidence_args"));
  FP_TRY(ad.port_in_use_regex, a.string("port_in_use_regex"));
  if (a.has("list_devices_args")) {
    FP_TRY(ad.list_devices_args, a.string_list("list_devices_args"));
  }
  for (const char* key : {"version_regex", "build_regex", "port_in_use_regex"}) {
    try {
      std::regex re(a.raw()[key].get<std::string>());
    } catch (const std::regex_error& e) {
      return a.error(key, std::string("not a valid regular expression: ") + e.what());
    }
  }
  if (a.has("evidence_env")) {
    FP_TRY(JsonFields env, a.object("evidence_env"));
    for (const auto& [k, _] : env.raw().items()) {
      FP_TRY(std::string v, env.string(k));
      ad.evidence_env[k] = v;
    }
  }
  ad.request_extras = a.raw().value("request_extras", nlohmann::json::object());
  if (!ad.request_extras.is_object()) return a.error("request_extras", "expected an object merged into each request body");
  return ad;
}

}  // namespace fp
