#include "runtime/adapter.h"

#include <algorithm>
#include <cstdlib>

#include "util/json_fields.h"
#include "runtime/runtime_data.h"
#include "util/text.h"
#include "util/regex.h"

namespace fp {

namespace {

Result<nlohmann::json> extra_object(const JsonFields& f, const std::string& key) {
  nlohmann::json extra = f.raw().value(key, nlohmann::json::object());
  if (!extra.is_object()) return f.error(key, "expected an object merged into the request");
  return extra;
}

Result<std::optional<TokenizerEndpoint>> load_tokenizer(const JsonFields& a) {
  FP_TRY(JsonFields t, a.object("tokenizer"));
  FP_TRY_STATUS(t.only_keys({"path", "text", "chat", "count", "comment"}));
  TokenizerEndpoint e;
  FP_TRY(e.path, t.string("path"));
  FP_TRY(e.count_field, t.string("count"));
  FP_TRY(JsonFields text, t.object("text"));
  FP_TRY_STATUS(text.only_keys({"field", "extra"}));
  FP_TRY(e.text_field, text.string("field"));
  FP_TRY(e.text_extra, extra_object(text, "extra"));
  FP_TRY(JsonFields chat, t.object("chat"));
  FP_TRY_STATUS(chat.only_keys({"messages_field", "extra", "template_path", "text_field"}));
  if (chat.has("template_path")) {
    FP_TRY(e.template_path, chat.string("template_path"));
    FP_TRY(e.template_messages_field, chat.string("messages_field"));
    FP_TRY(e.template_text_field, chat.string("text_field"));
    if (!starts_with(e.template_path, "/")) return chat.error("template_path", "must start with '/'");
  } else {
    FP_TRY(e.chat_messages_field, chat.string("messages_field"));
    FP_TRY(e.chat_extra, extra_object(chat, "extra"));
  }
  if (!starts_with(e.path, "/")) return t.error("path", "must start with '/'");
  return std::optional<TokenizerEndpoint>(e);
}

}  // namespace

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
  FP_TRY_STATUS(a.only_keys({"executable_var",  "executable_name",      "health_path",       "ready_paths",         "chat_path",
                             "completion_path", "version_args",         "version_regex",     "build_regex",         "timed_args",
                             "evidence_args",   "evidence_env",         "port_in_use_regex", "request_extras",      "tokenizer",
                             "exact_output",    "decode_probe",         "list_devices_args", "threads_args",        "threads_options",
                             "threads_default", "evidence_instruments", "server_timings",    "token_probabilities", "comment"}));
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
    if (auto re = Regex::compile(a.raw()[key].get<std::string>()); !re) return a.error(key, re.error().message);
  }
  if (a.has("evidence_env")) {
    FP_TRY(JsonFields env, a.object("evidence_env"));
    for (const auto& [k, _] : env.raw().items()) {
      FP_TRY(std::string v, env.string(k));
      ad.evidence_env[k] = v;
    }
  }
  if (a.has("evidence_instruments")) {
    FP_TRY(JsonFields ins, a.object("evidence_instruments"));
    FP_TRY_STATUS(ins.only_keys({"comment", "scheduler_debug", "verbose_logging"}));
    const std::vector<std::string> levels = {"log", "placement", "kernels"};
    auto read_levels = [&](const JsonFields& part, std::vector<std::string>& out) -> Status {
      FP_TRY(out, part.string_list("levels"));
      for (const auto& l : out)
        if (std::find(levels.begin(), levels.end(), l) == levels.end())
          return part.error("levels", quote(l) + " is not an evidence level; valid: log, placement, kernels");
      return ok_status();
    };
    if (ins.has("scheduler_debug")) {
      FP_TRY(JsonFields sd, ins.object("scheduler_debug"));
      FP_TRY_STATUS(sd.only_keys({"env", "levels"}));
      FP_TRY(ad.scheduler_debug_env, sd.string_list("env"));
      for (const auto& k : ad.scheduler_debug_env)
        if (!ad.evidence_env.count(k))
          return sd.error("env", quote(k) + " is not a key of adapter.evidence_env (the instrument takes off what the evidence pass adds)");
      FP_TRY_STATUS(read_levels(sd, ad.scheduler_debug_levels));
    }
    if (ins.has("verbose_logging")) {
      FP_TRY(JsonFields vl, ins.object("verbose_logging"));
      FP_TRY_STATUS(vl.only_keys({"levels"}));
      FP_TRY_STATUS(read_levels(vl, ad.verbose_logging_levels));
    }
  }
  ad.request_extras = a.raw().value("request_extras", nlohmann::json::object());
  if (!ad.request_extras.is_object()) return a.error("request_extras", "expected an object merged into each request body");
  ad.exact_output = a.raw().value("exact_output", nlohmann::json::object());
  if (!ad.exact_output.is_object())
    return a.error("exact_output", "expected an object merged into a request that must produce exactly max_tokens tokens, e.g. {\"ignore_eos\": true}");
  if (a.has("decode_probe")) {
    ad.decode_probe = a.raw()["decode_probe"];
    if (!ad.decode_probe->is_object())
      return a.error("decode_probe", "expected an object merged into a decode probe so that the runtime serves its prompt from its prompt cache, e.g. {\"cache_prompt\": true}");
    ad.decode_probe->erase("comment");  // the data file's note, not a request field
  }
  if (a.has("tokenizer")) {
    FP_TRY(ad.tokenizer, load_tokenizer(a));
  }
  if (a.has("token_probabilities")) {
    FP_TRY(ad.token_probabilities, load_token_probability_keys(a));
  }
  if (a.has("server_timings")) {
    FP_TRY(JsonFields st, a.object("server_timings"));
    FP_TRY_STATUS(st.only_keys({"object", "prompt_ms", "prompt_tokens", "cached_tokens", "prompt_per_second", "decode_ms", "decode_tokens",
                                "decode_per_second", "log_upkeep", "comment"}));
    if (st.has("log_upkeep")) {
      FP_TRY(JsonFields up, st.object("log_upkeep"));
      FP_TRY_STATUS(up.only_keys({"regex", "what", "comment"}));
      FP_TRY(ad.upkeep_log_regex, up.string("regex"));
      FP_TRY(ad.upkeep_log_what, up.string("what"));
      auto re = Regex::compile(ad.upkeep_log_regex);
      if (!re) return up.error("regex", re.error().message);
      if (re->mark_count() != 1)
        return up.error("regex", "has " + std::to_string(re->mark_count()) + " groups; expected one, the milliseconds");
    }
    ServerTimingKeys& k = ad.server_timing_keys;
    FP_TRY(k.object, st.string("object"));
    FP_TRY(k.prompt_ms, st.string("prompt_ms"));
    FP_TRY(k.prompt_tokens, st.string("prompt_tokens"));
    FP_TRY(k.cached_tokens, st.string("cached_tokens"));
    FP_TRY(k.decode_ms, st.string("decode_ms"));
    FP_TRY(k.decode_tokens, st.string("decode_tokens"));
    FP_TRY(k.prompt_per_second, st.string_or("prompt_per_second", ""));
    FP_TRY(k.decode_per_second, st.string_or("decode_per_second", ""));
  }
  if (a.has("threads_args")) {
    FP_TRY(ad.threads_args, a.string_list("threads_args"));
    FP_TRY(ad.threads_options, a.string_list("threads_options"));
    const bool placeholder = std::any_of(ad.threads_args.begin(), ad.threads_args.end(),
                                         [](const std::string& s) { return s.find("{threads}") != std::string::npos; });
    if (!placeholder) return a.error("threads_args", "has no {threads}; expected e.g. [\"-t\", \"{threads}\"]");
    if (a.has("threads_default")) {
      FP_TRY(ad.threads_default, a.string("threads_default"));
      if (ad.threads_default != "cpus" && ad.threads_default != "physical_cores")
        return a.error("threads_default", quote(ad.threads_default) + ": expected \"cpus\" or \"physical_cores\"");
    }
    if (ad.threads_options.empty())
      return a.error("threads_options", "empty; expected the options by which a launch line sets the threads, e.g. [\"-t\", \"--threads\"]");
  }
  return ad;
}

}  // namespace fp
