#include "runtime/launch_line.h"

#include <filesystem>

#include "util/json_fields.h"
#include "runtime/runtime_data.h"
#include "util/text.h"

namespace fp {
namespace {

Result<std::vector<std::string>> list_or_empty(const JsonFields& f, const std::string& key) {
  if (!f.has(key)) return std::vector<std::string>{};
  return f.string_list(key);
}

Result<std::map<std::string, std::vector<std::string>>> lists_by_name(const JsonFields& parent, const std::string& key) {
  std::map<std::string, std::vector<std::string>> out;
  if (!parent.has(key)) return out;
  FP_TRY(JsonFields f, parent.object(key));
  for (const auto& [name, _] : f.raw().items()) {
    FP_TRY(out[name], f.string_list(name));
    if (out[name].empty()) return f.error(name, "empty list; expected at least one option");
  }
  return out;
}

Status parse_offload(const JsonFields& top, OffloadOptions& o) {
  if (!top.has("offload")) return ok_status();
  FP_TRY(JsonFields f, top.object("offload"));
  FP_TRY_STATUS(f.only_keys({"gpu_layers", "gpu_layers_default", "all_layers", "device", "no_device", "split_mode",
                             "attention_on_main_gpu", "main_gpu", "comment"}));
  FP_TRY(o.gpu_layers, list_or_empty(f, "gpu_layers"));
  FP_TRY(o.gpu_layers_default, f.string_or("gpu_layers_default", ""));
  FP_TRY(o.all_layers, list_or_empty(f, "all_layers"));
  FP_TRY(o.device, list_or_empty(f, "device"));
  FP_TRY(o.no_device, list_or_empty(f, "no_device"));
  FP_TRY(o.split_mode, list_or_empty(f, "split_mode"));
  FP_TRY(o.attention_on_main_gpu, list_or_empty(f, "attention_on_main_gpu"));
  FP_TRY(o.main_gpu, list_or_empty(f, "main_gpu"));
  return ok_status();
}

Status parse_dropped(const JsonFields& top, std::vector<DroppedOption>& out) {
  if (!top.has("dropped")) return ok_status();
  const nlohmann::json& list = top.raw()["dropped"];
  if (!list.is_array()) return top.error("dropped", "expected an array of {\"options\", \"takes_value\", \"why\"}");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = top.path("dropped") + "[" + std::to_string(i) + "]";
    if (!list[i].is_object()) return make_error(top.file() + ": field \"" + where + "\": expected an object");
    JsonFields d(list[i], top.file(), where);
    FP_TRY_STATUS(d.only_keys({"options", "takes_value", "why"}));
    DroppedOption o;
    FP_TRY(o.names, d.string_list("options"));
    FP_TRY(o.takes_value, d.boolean("takes_value"));
    FP_TRY(o.why, d.string("why"));
    out.push_back(o);
  }
  return ok_status();
}

}  // namespace

Result<LaunchLine> parse_launch_line(const nlohmann::json& obj, const std::string& file) {
  JsonFields top(obj, file, "launch_line");
  FP_TRY_STATUS(top.only_keys({"placeholders", "added_when_missing", "flag", "context_default", "context_from_model", "served_model", "dropped",
                               "refused", "offload", "comment"}));
  LaunchLine l;
  l.file = file;
  FP_TRY(l.placeholders, lists_by_name(top, "placeholders"));
  FP_TRY(l.added_when_missing, lists_by_name(top, "added_when_missing"));
  if (top.has("flag")) {
    FP_TRY(JsonFields f, top.object("flag"));
    FP_TRY_STATUS(f.only_keys({"on", "off", "default", "comment"}));
    FP_TRY(l.flag_on, f.string("on"));
    FP_TRY(l.flag_off, f.string("off"));
    FP_TRY(l.flag_default, f.string("default"));
  }
  FP_TRY(l.context_default, top.string_or("context_default", ""));
  FP_TRY(l.context_from_model, list_or_empty(top, "context_from_model"));
  if (top.has("served_model")) {
    FP_TRY(JsonFields s, top.object("served_model"));
    FP_TRY_STATUS(s.only_keys({"options", "default", "comment"}));
    FP_TRY(l.served_model_options, list_or_empty(s, "options"));
    FP_TRY(l.served_model_default, s.one_of("default", {"file_name", "model_argument"}));
  }
  FP_TRY_STATUS(parse_dropped(top, l.dropped));
  if (top.has("refused")) {
    FP_TRY(JsonFields r, top.object("refused"));
    for (const auto& [opt, _] : r.raw().items()) {
      FP_TRY(l.refused[opt], r.string(opt));
    }
  }
  FP_TRY_STATUS(parse_offload(top, l.offload));
  return l;
}

Result<LaunchLine> load_launch_line(const std::string& runtime) {
  FP_TRY(RuntimeDataFile f, read_runtime_data(runtime));
  FP_TRY(nlohmann::json j, parse_json_object(f.text, f.path));
  if (!j.contains("launch_line") || !j["launch_line"].is_object())
    return make_error(f.path + ": no \"launch_line\" object: this runtime's data does not say how its command line "
                      "names the model, the port and the flag (see src/runtime/data/llama-server.json)");
  FP_TRY(LaunchLine l, parse_launch_line(j["launch_line"], f.path));
  l.runtime = runtime;
  return l;
}

std::optional<OptionValue> find_option(const std::vector<std::string>& argv, const std::vector<std::string>& names) {
  std::optional<OptionValue> found;
  for (size_t i = 0; i < argv.size(); ++i) {
    for (const auto& n : names) {
      if (argv[i] == n) {
        if (i + 1 < argv.size()) found = OptionValue{i, n, argv[i + 1], false};
      } else if (starts_with(argv[i], n + "=")) {
        found = OptionValue{i, n, argv[i].substr(n.size() + 1), true};
      }
    }
  }
  return found;
}

std::string served_model_name(const LaunchLine* rules, const std::vector<std::string>& argv, const std::string& model_path) {
  if (rules) {
    if (auto alias = find_option(argv, rules->served_model_options)) {
      const std::string first = trim(alias->value.substr(0, alias->value.find(',')));
      if (!first.empty()) return first;
    }
    if (rules->served_model_default == "model_argument") return model_path;
  }
  return std::filesystem::path(model_path).filename().string();
}

}  // namespace fp
