#include "support/support_rules.h"

#include <algorithm>
#include <cstdlib>

#include "runtime/launch_line.h"
#include "runtime/runtime_data.h"
#include "util/json_fields.h"
#include "util/text.h"

namespace fp {
namespace {

Status support_sized_option(const JsonFields& top, const std::string& key, std::vector<std::string>& options, int& dflt) {
  FP_TRY(JsonFields f, top.object(key));
  FP_TRY_STATUS(f.only_keys({"options", "default", "comment"}));
  FP_TRY(options, f.string_list("options"));
  if (options.empty()) return f.error("options", "empty; expected the option names, e.g. [\"-ub\"]");
  FP_TRY(long long d, f.integer("default", 1, 1 << 24));
  dflt = static_cast<int>(d);
  return ok_status();
}

// A whole number >= 1 as an option's value, else an error naming it.
Result<int> support_option_count(const OptionValue& o) {
  char* end = nullptr;
  const long n = std::strtol(o.value.c_str(), &end, 10);
  if (o.value.empty() || *end || n < 1 || n > (1 << 24))
    return make_error("launch line: " + o.option + " " + quote(o.value) + ": expected a whole number from 1 to 16777216");
  return static_cast<int>(n);
}

}  // namespace

Result<SupportRules> parse_support_rules(const std::string& text, const std::string& path) {
  FP_TRY(nlohmann::json j, parse_json_object(text, path));
  JsonFields top(j, path);
  if (!top.has("support"))
    return make_error(path + ": no \"support\" section: `flashproof support` does not know which ggml library this runtime "
                             "links or how its launch line sizes the attention node (see llama-server.json)");
  FP_TRY(JsonFields s, top.object("support"));
  FP_TRY_STATUS(s.only_keys({"comment", "library", "ubatch", "batch", "parallel", "kv_unified", "f32_cast_to"}));
  SupportRules r;
  r.data_file = path;
  FP_TRY(r.library, s.string("library"));
  if (r.library.empty()) return s.error("library", "empty; expected the library's soname prefix, e.g. \"libggml.so\"");
  FP_TRY_STATUS(support_sized_option(s, "ubatch", r.ubatch_options, r.ubatch_default));
  FP_TRY_STATUS(support_sized_option(s, "batch", r.batch_options, r.batch_default));
  FP_TRY(JsonFields par, s.object("parallel"));
  FP_TRY_STATUS(par.only_keys({"options", "auto", "comment"}));
  FP_TRY(r.parallel_options, par.string_list("options"));
  FP_TRY(r.parallel_auto, par.string_list("auto"));
  FP_TRY(JsonFields uni, s.object("kv_unified"));
  FP_TRY_STATUS(uni.only_keys({"on", "off", "comment"}));
  FP_TRY(r.unified_on, uni.string_list("on"));
  FP_TRY(r.unified_off, uni.string_list("off"));
  FP_TRY(r.f32_cast_to, s.string_or("f32_cast_to", ""));
  return r;
}

Result<SupportRules> load_support_rules(const std::string& runtime) {
  FP_TRY(RuntimeDataFile f, read_runtime_data(runtime));
  return parse_support_rules(f.text, f.path);
}

Result<LaunchBatch> launch_batch(const std::vector<std::string>& argv, const SupportRules& rules) {
  LaunchBatch b;
  int ubatch = rules.ubatch_default, batch = rules.batch_default;
  if (auto o = find_option(argv, rules.ubatch_options)) {
    FP_TRY(ubatch, support_option_count(*o));
  }
  if (auto o = find_option(argv, rules.batch_options)) {
    FP_TRY(batch, support_option_count(*o));
  }
  b.ubatch = std::min(ubatch, batch);
  bool parallel_auto = true;
  if (auto o = find_option(argv, rules.parallel_options)) {
    if (std::find(rules.parallel_auto.begin(), rules.parallel_auto.end(), o->value) == rules.parallel_auto.end()) {
      FP_TRY(b.slots, support_option_count(*o));
      parallel_auto = false;
    }
  }
  // One KV buffer for every slot when the slots are automatic or a flag asks for it; the last of
  // the on and off flags decides.
  bool unified = parallel_auto;
  for (const auto& a : argv) {
    if (std::find(rules.unified_on.begin(), rules.unified_on.end(), a) != rules.unified_on.end()) unified = true;
    if (std::find(rules.unified_off.begin(), rules.unified_off.end(), a) != rules.unified_off.end()) unified = false;
  }
  b.separate_streams = !unified && b.slots > 1;
  return b;
}

}  // namespace fp
