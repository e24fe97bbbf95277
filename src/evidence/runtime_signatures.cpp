#include "evidence/runtime_signatures.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "util/json_fields.h"
#include "util/text.h"

namespace fp {
namespace {

using nlohmann::json;

struct KindInfo {
  RuleKind kind;
  const char* name;
  const char* section;
  std::vector<std::string> required;  // capture roles
  std::vector<std::string> optional;
};

const std::vector<KindInfo>& kinds() {
  static const std::vector<KindInfo> table = {
      {RuleKind::Requested, "requested", "log", {"state"}, {}},
      {RuleKind::Decision, "decision", "log", {}, {"state", "backend", "reason"}},
      {RuleKind::Reason, "reason", "log", {}, {"backend", "reason"}},
      {RuleKind::Fatal, "fatal", "log", {}, {"reason"}},
      {RuleKind::Note, "note", "log", {}, {"backend", "reason"}},
      {RuleKind::KvTokens, "kv_tokens", "log", {"value"}, {}},
      {RuleKind::GraphSplits, "graph_splits", "log", {"value"}, {"batch"}},
      {RuleKind::GraphNodes, "graph_nodes", "log", {"value"}, {}},
      {RuleKind::KvBuffer, "kv_buffer", "log", {"device", "mib"}, {}},
      {RuleKind::KvTotal, "kv_total", "log", {"mib"}, {"cells", "streams", "k_type", "k_mib", "v_type", "v_mib"}},
      {RuleKind::ComputeBuffer, "compute_buffer", "log", {"device", "mib"}, {}},
      {RuleKind::Degraded, "degraded", "log", {"k_type", "v_type"}, {"to_type"}},
      {RuleKind::CompiledPairs, "compiled_pairs", "log", {}, {"pairs", "all"}},
      {RuleKind::GpuArchs, "gpu_archs", "log", {"archs"}, {}},
      {RuleKind::FusedNode, "fused_node", "placement", {"backend"}, {"index", "op", "name"}},
      {RuleKind::UnfusedNode, "unfused_node", "placement", {"backend"}, {"index", "op", "name"}},
      {RuleKind::Split, "split", "placement", {"index"}, {"backend"}},
      {RuleKind::Device, "device", "placement", {"name"}, {"description"}},
      {RuleKind::FusedKernel, "fused_kernel", "kernels", {}, {"k_type", "v_type"}},
      {RuleKind::UnfusedKernel, "unfused_kernel", "kernels", {}, {}},
      {RuleKind::ConversionKernel, "conversion_kernel", "kernels", {}, {"type"}},
  };
  return table;
}

std::string kind_names(const std::string& section) {
  std::vector<std::string> names;
  for (const auto& k : kinds())
    if (section == k.section) names.push_back(k.name);
  return join(names, ", ");
}

// Context for error messages: "<file>: <key path>: ".
struct Where {
  std::string file;
  std::string key;
  Error error(const std::string& what) const { return make_error(file + ": " + key + ": " + what); }
  Where at(const std::string& sub) const { return {file, key.empty() ? sub : key + "." + sub}; }
  Where index(size_t i) const { return {file, key + "[" + std::to_string(i) + "]"}; }
  Status only_keys(const json& obj, const std::set<std::string>& allowed) const {
    return fp::only_keys(obj, file + ": " + key, KeyWording::KeyList, allowed);
  }
};

Result<std::string> get_string(const json& obj, const std::string& key, const Where& where, bool required) {
  if (!obj.contains(key)) {
    if (required) return where.error("missing key " + quote(key) + " (a string)");
    return std::string();
  }
  const json& v = obj.at(key);
  if (!v.is_string()) return where.at(key).error("value " + quote(v.dump()) + " is not a string");
  return v.get<std::string>();
}

Result<std::vector<std::string>> get_strings(const json& obj, const std::string& key, const Where& where) {
  std::vector<std::string> out;
  if (!obj.contains(key)) return out;
  const json& v = obj.at(key);
  if (!v.is_array()) return where.at(key).error("value " + quote(v.dump()) + " is not an array of strings");
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return where.at(key).index(i).error("value " + quote(v[i].dump()) + " is not a string");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Status compile_pattern(Rule& rule, const Where& where) {
  auto re = Regex::compile(rule.pattern);
  if (!re) return where.at("pattern").error("value " + quote(rule.pattern) + " is " + re.error().message);
  rule.regex = std::move(*re);
  return ok_status();
}

Status parse_captures(const json& obj, Rule& rule, const KindInfo& info, const Where& where) {
  std::set<std::string> allowed(info.required.begin(), info.required.end());
  allowed.insert(info.optional.begin(), info.optional.end());
  if (obj.contains("captures")) {
    const json& caps = obj.at("captures");
    if (!caps.is_object()) return where.at("captures").error("value " + quote(caps.dump()) + " is not an object");
    for (const auto& [role, idx] : caps.items()) {
      Where w = where.at("captures").at(role);
      if (!allowed.count(role)) {
        std::vector<std::string> names(allowed.begin(), allowed.end());
        return w.error("unknown capture role for kind " + quote(info.name) + "; valid roles: " +
                       (names.empty() ? std::string("none") : join(names, ", ")));
      }
      size_t groups = rule.regex.mark_count();
      if (!idx.is_number_integer() || idx.get<int>() < 1 || idx.get<size_t>() > groups)
        return w.error("value " + quote(idx.dump()) + " is not a group of the pattern (1.." +
                       std::to_string(groups) + ")");
      rule.captures[role] = idx.get<int>();
    }
  }
  for (const auto& role : info.required)
    if (!rule.captures.count(role))
      return where.at("captures").error("kind " + quote(info.name) + " needs capture role " + quote(role));
  return ok_status();
}

Status parse_answer(const json& obj, Rule& rule, const Where& where) {
  if (obj.contains("fused")) {
    if (!obj.at("fused").is_boolean())
      return where.at("fused").error("value " + quote(obj.at("fused").dump()) + " is not true or false");
    rule.fused = obj.at("fused").get<bool>();
  }
  if (obj.contains("states")) {
    const json& st = obj.at("states");
    if (!st.is_object()) return where.at("states").error("value " + quote(st.dump()) + " is not an object");
    for (const auto& [text, v] : st.items()) {
      if (v.is_null()) rule.states[text] = std::nullopt;
      else if (v.is_boolean()) rule.states[text] = v.get<bool>();
      else return where.at("states").at(text).error("value " + quote(v.dump()) + " is not true, false or null");
    }
  }
  bool answers = rule.kind == RuleKind::Requested || rule.kind == RuleKind::Decision;
  if (!answers && (obj.contains("fused") || obj.contains("states")))
    return where.error("keys \"fused\" and \"states\" belong to kinds requested and decision only");
  if (!answers) return ok_status();
  bool by_state = rule.captures.count("state") && !rule.states.empty();
  if (!rule.fused && !by_state)
    return where.error("kind " + quote(to_string(rule.kind)) +
                       " needs \"fused\": true|false, or a \"state\" capture with a \"states\" map");
  if (rule.captures.count("state") && rule.states.empty())
    return where.at("states").error("missing: the \"state\" capture needs a map from captured text to fused");
  return ok_status();
}

Result<Rule> parse_signature_rule(const json& obj, const std::string& section, const Where& where) {
  if (!obj.is_object()) return where.error("value " + quote(obj.dump()) + " is not an object");
  FP_TRY_STATUS(
      where.only_keys(obj, {"name", "kind", "pattern", "captures", "fused", "states", "scale_to_mib", "comment", "examples",
                            "counter_examples", "backend", "family", "name_width", "source", "type_names", "reads_kv", "cause", "remedy"}));
  Rule rule;
  FP_TRY(rule.name, get_string(obj, "name", where, true));
  FP_TRY(std::string kind, get_string(obj, "kind", where, true));
  const KindInfo* info = nullptr;
  for (const auto& k : kinds())
    if (kind == k.name && section == k.section) info = &k;
  if (!info)
    return where.at("kind").error("value " + quote(kind) + " is not a kind of section " + quote(section) +
                                  "; valid: " + kind_names(section));
  rule.kind = info->kind;
  FP_TRY(rule.pattern, get_string(obj, "pattern", where, true));
  FP_TRY(rule.comment, get_string(obj, "comment", where, true));
  FP_TRY_STATUS(compile_pattern(rule, where));
  FP_TRY_STATUS(parse_captures(obj, rule, *info, where));
  FP_TRY_STATUS(parse_answer(obj, rule, where));
  if (obj.contains("scale_to_mib")) {
    const json& s = obj.at("scale_to_mib");
    if (!s.is_number() || s.get<double>() <= 0)
      return where.at("scale_to_mib").error("value " + quote(s.dump()) + " is not a positive number");
    rule.scale_to_mib = s.get<double>();
  }
  FP_TRY(rule.backend, get_string(obj, "backend", where, false));
  if (!rule.backend.empty() && section != "kernels")
    return where.at("backend").error("belongs to kernel rules only (the attention backend a kernel belongs to)");
  FP_TRY(std::string source, get_string(obj, "source", where, false));
  if (!source.empty() && (section != "kernels" || source != "device_timings"))
    return where.at("source").error("value " + quote(source) + ": kernel rules only, and only \"device_timings\" (the rule reads "
                                    "op names from device_timings; without it, kernel names from the probe)");
  rule.device_timings = source == "device_timings";
  FP_TRY(rule.family, get_string(obj, "family", where, false));
  if (!rule.family.empty() && section != "kernels")
    return where.at("family").error("belongs to kernel rules only (the kernel family a kernel belongs to, e.g. fattn-mma)");
  if (obj.contains("name_width")) {
    const json& w = obj.at("name_width");
    if (rule.kind != RuleKind::FusedNode && rule.kind != RuleKind::UnfusedNode)
      return where.at("name_width").error("belongs to node rules only (fused_node, unfused_node)");
    if (!w.is_number_integer() || w.get<long long>() < 1 || w.get<long long>() > 64)
      return where.at("name_width").error("value " + quote(w.dump()) +
                                          " is not the width the backend name is cut to, a whole number 1..64");
    rule.name_width = w.get<int>();
  }
  if (obj.contains("type_names")) {
    const json& t = obj.at("type_names");
    if (rule.kind != RuleKind::FusedKernel || !(rule.captures.count("k_type") || rule.captures.count("v_type")))
      return where.at("type_names").error("belongs to fused_kernel rules with a \"k_type\" or \"v_type\" capture only");
    if (!t.is_object() || t.empty())
      return where.at("type_names").error("value " + quote(t.dump()) + " is not an object of captured type -> type name");
    for (const auto& [k, v] : t.items()) {
      if (!v.is_string() || v.get<std::string>().empty())
        return where.at("type_names").at(k).error("value " + quote(v.dump()) + " is not a type name such as \"f16\"");
      rule.type_names[k] = v.get<std::string>();
    }
  }
  FP_TRY(rule.reads_kv, get_string(obj, "reads_kv", where, false));
  if (!rule.reads_kv.empty()) {
    if (rule.kind != RuleKind::FusedKernel || rule.captures.count("k_type") || rule.captures.count("v_type"))
      return where.at("reads_kv").error("belongs to fused_kernel rules without a \"k_type\" or \"v_type\" capture only");
    const size_t dash = rule.reads_kv.find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == rule.reads_kv.size() ||
        rule.reads_kv.find('-', dash + 1) != std::string::npos)
      return where.at("reads_kv").error("value " + quote(rule.reads_kv) + " is not a K-V type pair such as \"f16-f16\"");
  }
  const bool degraded = rule.kind == RuleKind::Degraded;
  for (const char* key : {"cause", "remedy"}) {
    if (obj.contains(key) && !degraded)
      return where.at(key).error("belongs to rules of kind \"degraded\" only");
    if (!degraded) continue;
    FP_TRY(std::string text, get_string(obj, key, where, true));
    if (text.empty()) return where.at(key).error("value \"\" is empty; say it in the runtime's terms, {k_type} and {v_type} filled in");
    (std::string(key) == "cause" ? rule.cause : rule.remedy) = text;
  }
  FP_TRY(rule.examples, get_strings(obj, "examples", where));
  FP_TRY(rule.counter_examples, get_strings(obj, "counter_examples", where));
  if (rule.examples.empty())
    return where.at("examples").error("missing: every rule needs at least one sample line that it matches");
  return rule;
}

Result<std::vector<Rule>> parse_section(const json& ev, const std::string& section, const Where& where,
                                        bool required) {
  std::vector<Rule> rules;
  if (!ev.contains(section)) {
    if (required) return where.error("missing key " + quote(section) + " (an array of rules)");
    return rules;
  }
  const json& arr = ev.at(section);
  Where w = where.at(section);
  if (!arr.is_array()) return w.error("value " + quote(arr.dump()) + " is not an array of rules");
  std::set<std::string> names;
  for (size_t i = 0; i < arr.size(); ++i) {
    FP_TRY(Rule rule, parse_signature_rule(arr[i], section, w.index(i)));
    if (!names.insert(rule.name).second) return w.index(i).at("name").error("duplicate name " + quote(rule.name));
    rules.push_back(std::move(rule));
  }
  return rules;
}

Result<Rule> parse_prefix(const json& obj, const Where& where) {
  if (!obj.is_object()) return where.error("value " + quote(obj.dump()) + " is not an object");
  FP_TRY_STATUS(where.only_keys(obj, {"pattern", "comment", "examples", "counter_examples"}));
  Rule rule;
  rule.name = "record_prefix";
  FP_TRY(rule.pattern, get_string(obj, "pattern", where, true));
  FP_TRY(rule.comment, get_string(obj, "comment", where, true));
  FP_TRY_STATUS(compile_pattern(rule, where));
  FP_TRY(rule.examples, get_strings(obj, "examples", where));
  FP_TRY(rule.counter_examples, get_strings(obj, "counter_examples", where));
  if (rule.examples.empty()) return where.at("examples").error("missing: needs at least one sample record");
  return rule;
}

Result<Rule> parse_process_prefix(const json& obj, const Where& where) {
  FP_TRY(Rule rule, parse_prefix(obj, where));
  rule.name = "process_prefix";
  if (rule.regex.mark_count() < 1)
    return where.at("pattern").error("value " + quote(rule.pattern) +
                                     " has no group; group 1 must capture the process label");
  if (rule.pattern.empty() || rule.pattern[0] != '^')
    return where.at("pattern").error("value " + quote(rule.pattern) + " must start with '^' (a line's start)");
  return rule;
}

Status parse_attention_backends(const json& obj, const Where& where, RuntimeSignatures& sigs) {
  if (!obj.is_object()) return where.error("value " + quote(obj.dump()) + " is not an object");
  FP_TRY_STATUS(where.only_keys(obj, {"comment", "names", "aliases"}));
  FP_TRY(std::string comment, get_string(obj, "comment", where, true));
  (void)comment;
  FP_TRY(sigs.attention_backends, get_strings(obj, "names", where));
  if (sigs.attention_backends.empty())
    return where.at("names").error("missing: the attention backend names an expectation may use");
  const Regex name_re("[A-Za-z][A-Za-z0-9_]*");
  for (size_t i = 0; i < sigs.attention_backends.size(); ++i)
    if (!regex_match(sigs.attention_backends[i], name_re))
      return where.at("names").index(i).error("value " + quote(sigs.attention_backends[i]) +
                                              " is not a backend name (letters, digits, _)");
  if (obj.contains("aliases")) {
    const json& a = obj.at("aliases");
    if (!a.is_object()) return where.at("aliases").error("value " + quote(a.dump()) + " is not an object");
    for (const auto& [text, v] : a.items()) {
      if (!v.is_string()) return where.at("aliases").at(text).error("value " + quote(v.dump()) + " is not a string");
      std::string name = v.get<std::string>();
      if (std::find(sigs.attention_backends.begin(), sigs.attention_backends.end(), name) ==
          sigs.attention_backends.end())
        return where.at("aliases").at(text).error("value " + quote(name) + " is not one of \"names\": " +
                                                  join(sigs.attention_backends, ", "));
      sigs.backend_aliases[text] = name;
    }
  }
  return ok_status();
}

// One pattern of device_timings: pattern, comment, examples, counter_examples, and for some the
// capture roles it must have (group numbers, like a rule's "captures").
Result<Rule> parse_timing_rule(const json& parent, const std::string& key, const Where& where,
                               const std::vector<std::string>& roles) {
  if (!parent.contains(key)) return where.at(key).error("missing");
  const json& obj = parent.at(key);
  Where w = where.at(key);
  if (!obj.is_object()) return w.error("value " + quote(obj.dump()) + " is not an object");
  json plain = obj;
  plain.erase("captures");
  if (key == "backend") plain.erase("name_format");  // read by parse_device_timings
  FP_TRY(Rule rule, parse_prefix(plain, w));
  rule.name = key;
  for (const auto& role : roles) {
    if (!obj.contains("captures") || !obj.at("captures").is_object() || !obj.at("captures").contains(role) ||
        !obj.at("captures").at(role).is_number_integer())
      return w.at("captures").error("needs the group number of " + quote(role) + ", e.g. {\"" + role + "\": 1}");
    const int group = obj.at("captures").at(role).get<int>();
    if (group < 1 || static_cast<unsigned>(group) > rule.regex.mark_count())
      return w.at("captures").at(role).error("group " + std::to_string(group) + " is not a group of the pattern (it has " +
                                             std::to_string(rule.regex.mark_count()) + ")");
    rule.captures[role] = group;
  }
  return rule;
}

Result<DeviceTimings> parse_device_timings(const json& obj, const Where& where) {
  if (!obj.is_object()) return where.error("value " + quote(obj.dump()) + " is not an object");
  FP_TRY_STATUS(where.only_keys(obj, {"comment", "env", "block", "end", "op", "devices", "backend"}));
  DeviceTimings t;
  FP_TRY(t.comment, get_string(obj, "comment", where, true));
  if (!obj.contains("env") || !obj.at("env").is_object() || obj.at("env").empty())
    return where.at("env").error("needs the environment that makes the runtime print its timings, e.g. {\"GGML_VK_PERF_LOGGER\": \"1\"}");
  for (const auto& [k, v] : obj.at("env").items()) {
    if (!v.is_string()) return where.at("env").at(k).error("value " + quote(v.dump()) + " is not a string");
    t.env[k] = v.get<std::string>();
  }
  FP_TRY(t.block, parse_timing_rule(obj, "block", where, {}));
  FP_TRY(t.end, parse_timing_rule(obj, "end", where, {}));
  FP_TRY(t.op, parse_timing_rule(obj, "op", where, {"name", "count", "total_us"}));
  FP_TRY(t.devices, parse_timing_rule(obj, "devices", where, {"count"}));
  FP_TRY(t.backend, parse_timing_rule(obj, "backend", where, {}));
  FP_TRY(t.backend_format, get_string(obj.at("backend"), "name_format", where.at("backend"), true));
  if (t.backend_format.find("{device}") == std::string::npos)
    return where.at("backend").at("name_format").error("value " + quote(t.backend_format) + " has no {device}; e.g. \"Vulkan{device}\"");
  if (t.backend.regex.mark_count() < 1)
    return where.at("backend").at("pattern").error("value " + quote(t.backend.pattern) + " has no group; group 1 must capture the device number");
  return t;
}

Result<KernelDegradation> parse_degraded_kernels(const json& obj, const Where& where) {
  if (!obj.is_object()) return where.error("value " + quote(obj.dump()) + " is not an object");
  FP_TRY_STATUS(where.only_keys(obj, {"comment", "vector_head_sizes", "cause", "remedy"}));
  KernelDegradation d;
  FP_TRY(d.comment, get_string(obj, "comment", where, true));
  FP_TRY(d.cause, get_string(obj, "cause", where, true));
  FP_TRY(d.remedy, get_string(obj, "remedy", where, true));
  const json* sizes = obj.contains("vector_head_sizes") ? &obj.at("vector_head_sizes") : nullptr;
  if (!sizes || !sizes->is_array() || sizes->empty())
    return where.at("vector_head_sizes").error("needs the head sizes the vector kernel is compiled for, e.g. [64, 128, 256]");
  for (const auto& v : *sizes) {
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 4096)
      return where.at("vector_head_sizes").error("value " + quote(v.dump()) + " is not a head size, a whole number 1..4096");
    d.vector_head_sizes.push_back(v.get<int>());
  }
  for (const std::string* text : {&d.cause, &d.remedy})
    if (text->empty()) return where.at(text == &d.cause ? "cause" : "remedy").error("value \"\" is empty; say it in the runtime's terms");
  return d;
}

Status parse_hints(const json& obj, const Where& where, std::map<std::string, std::string>& hints) {
  if (!obj.is_object()) return where.error("value " + quote(obj.dump()) + " is not an object");
  FP_TRY_STATUS(where.only_keys(obj, {"log", "placement", "kernels"}));
  for (const auto& [key, value] : obj.items()) {
    if (!value.is_string()) return where.at(key).error("value " + quote(value.dump()) + " is not a string");
    hints[key] = value.get<std::string>();
  }
  return ok_status();
}

}  // namespace

std::string to_string(RuleKind kind) {
  for (const auto& k : kinds())
    if (k.kind == kind) return k.name;
  return "unknown";
}

Result<RuntimeSignatures> parse_runtime_signatures(const std::string& json_text, const std::string& path,
                                                   const std::string& runtime, const SignaturesLoader& load_same_as) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers beyond a double
    return make_error(path + ": not valid JSON: " + e.what());
  }
  Where top{path, ""};
  if (!doc.is_object()) return top.error("top level is not an object");
  if (!doc.contains("evidence")) return make_error(path + ": missing top-level key \"evidence\"");
  const json& ev = doc.at("evidence");
  Where where{path, "evidence"};
  if (!ev.is_object()) return where.error("value is not an object");
  if (ev.contains("same_as")) {
    // Another runtime's signatures, whole: a runtime driven through a different adapter (e.g. the
    // generic OpenAI-compatible one) still prints its own log.
    FP_TRY_STATUS(where.only_keys(ev, {"comment", "same_as"}));
    const json& other = ev.at("same_as");
    if (!other.is_string()) return where.at("same_as").error("value " + quote(other.dump()) + " is not a runtime name");
    std::string name = other.get<std::string>();
    if (name == runtime) return where.at("same_as").error("value " + quote(name) + " names this file itself");
    if (!load_same_as) return where.at("same_as").error("names runtime " + quote(name) + " but no loader was given");
    auto base = load_same_as(name);
    if (!base) return where.at("same_as").error(base.error().message);
    base->runtime = runtime;
    base->source = path + " (evidence same as " + base->source + ")";
    return *base;
  }
  FP_TRY_STATUS(where.only_keys(ev, {"comment", "record_prefix", "process_prefix", "attention_backends", "hints", "gpu_backend",
                                     "device_timings", "log", "placement", "kernels", "causes", "instruments", "degraded_kernels"}));
  RuntimeSignatures sigs;
  sigs.runtime = runtime;
  sigs.source = path;
  if (ev.contains("record_prefix")) {
    FP_TRY(Rule prefix, parse_prefix(ev.at("record_prefix"), where.at("record_prefix")));
    sigs.record_prefix = std::move(prefix);
  }
  if (ev.contains("process_prefix")) {
    FP_TRY(Rule prefix, parse_process_prefix(ev.at("process_prefix"), where.at("process_prefix")));
    sigs.process_prefix = std::move(prefix);
  }
  if (ev.contains("gpu_backend")) {
    const json& g = ev.at("gpu_backend");
    Where w = where.at("gpu_backend");
    json without_format = g;
    if (g.is_object()) {
      FP_TRY(sigs.gpu_backend_format, get_string(g, "name_format", w, true));
      if (sigs.gpu_backend_format.find("{device}") == std::string::npos)
        return w.at("name_format").error("value " + quote(sigs.gpu_backend_format) + " has no {device}; e.g. \"CUDA{device}\"");
      without_format.erase("name_format");
    }
    FP_TRY(Rule gpu, parse_prefix(without_format, w));
    gpu.name = "gpu_backend";
    if (gpu.regex.mark_count() < 1)
      return w.at("pattern").error("value " + quote(gpu.pattern) + " has no group; group 1 must capture the device number");
    sigs.gpu_backend = std::move(gpu);
  }
  if (ev.contains("device_timings")) {
    FP_TRY(DeviceTimings t, parse_device_timings(ev.at("device_timings"), where.at("device_timings")));
    sigs.device_timings = std::move(t);
  }
  if (ev.contains("attention_backends"))
    FP_TRY_STATUS(parse_attention_backends(ev.at("attention_backends"), where.at("attention_backends"), sigs));
  if (ev.contains("hints")) FP_TRY_STATUS(parse_hints(ev.at("hints"), where.at("hints"), sigs.hints));
  FP_TRY(sigs.log, parse_section(ev, "log", where, true));
  FP_TRY(sigs.placement, parse_section(ev, "placement", where, false));
  FP_TRY(sigs.kernels, parse_section(ev, "kernels", where, true));
  if (ev.contains("causes")) {
    FP_TRY(sigs.causes, parse_cause_rules(ev.at("causes"), path + ": evidence.causes"));
  }
  if (ev.contains("degraded_kernels")) {
    FP_TRY(KernelDegradation d, parse_degraded_kernels(ev.at("degraded_kernels"), where.at("degraded_kernels")));
    sigs.degraded_kernels = std::move(d);
  }
  if (ev.contains("instruments")) {
    FP_TRY(sigs.instruments, parse_instrument_rules(ev.at("instruments"), path + ": evidence.instruments"));
  }
  return sigs;
}

std::string RuntimeSignatures::gpu_backend_name(int device) const {
  std::string name = gpu_backend_format;
  size_t at = name.find("{device}");
  if (at == std::string::npos) return "";
  return name.replace(at, 8, std::to_string(device));
}

std::string RuntimeSignatures::canonical_backend(const std::string& text) const {
  std::string t = trim(text);
  auto it = backend_aliases.find(t);
  if (it != backend_aliases.end()) return it->second;
  size_t dot = t.rfind('.');
  if (dot != std::string::npos && dot + 1 < t.size()) {
    std::string tail = t.substr(dot + 1);
    auto jt = backend_aliases.find(tail);
    return jt != backend_aliases.end() ? jt->second : tail;
  }
  return t;
}

bool rule_search(const Rule& rule, std::string_view text, RegexMatch& match) {
  return regex_search(text, rule.regex, match);
}

std::string capture(const Rule& rule, const RegexMatch& match, const std::string& role) {
  auto it = rule.captures.find(role);
  if (it == rule.captures.end() || static_cast<size_t>(it->second) >= match.size()) return "";
  if (!match[static_cast<size_t>(it->second)].matched) return "";
  return match.str(static_cast<size_t>(it->second));
}

}  // namespace fp
