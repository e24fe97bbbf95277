#include "case/case_file.h"

#include <algorithm>
#include <filesystem>

#include "case/effect_defaults.h"
#include "util/json_fields.h"
#include "util/model_files.h"
#include "util/regex.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const Regex kName(R"([a-z0-9][a-z0-9._-]{0,80})");
const Regex kSha(R"([0-9a-f]{64})");

// A path inside the suite, or an error naming the field.
Result<std::string> suite_path(const JsonFields& f, const std::string& key, const std::string& root,
                              bool allow_absolute) {
  FP_TRY(std::string p, f.string(key));
  if (p.empty()) return f.error(key, "empty; expected a path relative to the suite root " + root);
  fs::path path(p);
  if (path.is_absolute()) {
    if (allow_absolute) return p;
    return f.error(key, "absolute path; expected a path relative to the suite root " + root);
  }
  fs::path norm = path.lexically_normal();
  if (norm.empty() || *norm.begin() == "..")
    return f.error(key, "escapes the suite; expected a path inside " + root);
  return norm.string();
}

// The {name} placeholders of one argument (a name holds no brace), and whether a brace stands
// outside them.
struct ArgPlaceholders {
  std::vector<std::string> names;
  bool stray_brace = false;
};

ArgPlaceholders scan_placeholders(const std::string& a) {
  static const Regex placeholder(R"(\{([^{}]*)\})"), brace("[{}]");
  ArgPlaceholders p;
  size_t outside = 0;  // start of the text after the last placeholder
  for (const RegexMatch& m : regex_find_all(a, placeholder)) {
    p.stray_brace = p.stray_brace || regex_search(std::string_view(a).substr(outside, m.position(0) - outside), brace);
    p.names.push_back(m.str(1));
    outside = m.position(0) + m.length(0);
  }
  p.stray_brace = p.stray_brace || regex_search(std::string_view(a).substr(outside), brace);
  return p;
}

// [A-Za-z_][A-Za-z0-9_]* (without '_' first unless allowed).
bool is_identifier(const std::string& s, bool underscore_first) {
  static const Regex name("[A-Za-z][A-Za-z0-9_]*"), name_or_underscore("[A-Za-z_][A-Za-z0-9_]*");
  return regex_match(s, underscore_first ? name_or_underscore : name);
}

Status check_placeholders(const JsonFields& launch, const std::vector<std::string>& argv) {
  const auto& known = known_placeholders();
  std::set<std::string> seen;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const ArgPlaceholders found = scan_placeholders(a);
    for (const std::string& name : found.names) {
      if (std::find(known.begin(), known.end(), name) == known.end())
        return launch.error("", "argv[" + std::to_string(i) + "] = " + quote(a) + ": unknown placeholder {" + name +
                                    "}; valid: {" + join(known, "} {") + "}");
      seen.insert(name);
    }
    if (found.stray_brace)
      return launch.error("", "argv[" + std::to_string(i) + "] = " + quote(a) + ": unbalanced brace; placeholders look like {model}");
  }
  for (const char* required : {"model", "port", "flag"})
    if (!seen.count(required))
      return launch.error("argv", std::string("has no {") + required + "} placeholder; the harness must set the model, the port and the flag's value");
  if (argv.empty() || argv[0] != "{runtime}")
    return launch.error("argv", "must start with \"{runtime}\" (the harness resolves the runtime's executable)");
  return ok_status();
}

Result<Job> parse_job(const JsonFields& f) {
  FP_TRY(std::string s, f.one_of("job", {"chat", "completion", "extraction", "batch"}));
  if (s == "chat") return Job::Chat;
  if (s == "completion") return Job::Completion;
  if (s == "extraction") return Job::Extraction;
  return Job::Batch;
}

// "sha256": one string for one file; for a split GGUF an array with one per shard, in shard order.
Status load_model_sha256(const JsonFields& m, ModelRef& model) {
  const int shards = split_name(model.path).count;
  const std::string how = shards ? "model.path names a split GGUF of " + std::to_string(shards) +
                                       " shards: expected an array of " + std::to_string(shards) +
                                       " sha256 values, one per shard in order (sha256sum of each shard)"
                                 : "expected 64 lowercase hex digits (sha256sum of the model file)";
  if (!m.has("sha256")) return m.error("sha256", "missing; " + how);
  if (shards) {
    if (!m.raw()["sha256"].is_array()) return m.error("sha256", how);
    FP_TRY(model.shard_sha256, m.string_list("sha256"));
  } else {
    if (m.raw()["sha256"].is_array()) return m.error("sha256", "model.path names one file (not NAME-00001-of-0000N.gguf): " + how);
    FP_TRY(std::string one, m.string("sha256"));
    model.shard_sha256 = {one};
  }
  if (model.shard_sha256.size() != static_cast<size_t>(std::max(shards, 1)))
    return m.error("sha256", std::to_string(model.shard_sha256.size()) + " values; " + how);
  for (const auto& sha : model.shard_sha256)
    if (!regex_match(sha, kSha)) return m.error("sha256", quote(sha) + " is not a sha256; " + how);
  model.sha256 = join(model.shard_sha256, ",");
  return ok_status();
}

Status load_model(const JsonFields& top, const std::string& root, Case& c) {
  FP_TRY(JsonFields m, top.object("model"));
  FP_TRY_STATUS(m.only_keys({"path", "sha256", "recipe", "served_name"}));
  FP_TRY(c.model.served_name, m.string_or("served_name", ""));
  FP_TRY(c.model.path, suite_path(m, "path", root, /*allow_absolute=*/true));
  FP_TRY_STATUS(load_model_sha256(m, c.model));
  if (m.has("recipe")) {
    FP_TRY(c.model.recipe, suite_path(m, "recipe", root, false));
    if (std::error_code ec; !fs::exists(fs::path(root) / c.model.recipe, ec)) return m.error("recipe", "no such file under " + root);
  }
  fs::path model = fs::path(c.model.path).is_absolute() ? fs::path(c.model.path) : fs::path(root) / c.model.path;
  if (std::error_code ec; !fs::exists(model, ec)) {
    std::string hint = c.model.recipe.empty() ? "" : "; generate it with: flashproof make-model " + c.model.recipe;
    return m.error("path", "no such file: " + model.string() + hint);
  }
  return ok_status();
}

Status load_shape(const JsonFields& top, const Suite& suite, Case& c) {
  const std::string& root = suite.root;
  FP_TRY(JsonFields s, top.object("shape"));
  FP_TRY_STATUS(s.only_keys({"context", "prompt_set", "max_output_tokens", "long_prompt", "prompt_tokens", "synthetic_prompts",
                             "output_tokens", "prompt_cache"}));
  FP_TRY(c.shape.prompt_cache, s.boolean_or("prompt_cache", false));
  // An attached server's context is its own business: optional there (0: not stated).
  FP_TRY(long long ctx, c.attach && !s.has("context") ? Result<long long>(0) : s.integer("context", 128, 1 << 22));
  c.shape.context = static_cast<int>(ctx);
  if (s.has("synthetic_prompts")) {
    if (s.has("prompt_set")) return s.error("synthetic_prompts", "and \"prompt_set\" both given; give one: a prompt set, or this many synthetic prompts");
    FP_TRY(long long n, s.integer("synthetic_prompts", 1, 1000));
    c.shape.synthetic_prompts = static_cast<int>(n);
    if (!s.has("prompt_tokens")) return s.error("synthetic_prompts", "needs \"prompt_tokens\": how many tokens each synthetic prompt holds");
  } else {
    FP_TRY(c.shape.prompt_set, s.string("prompt_set"));
    if (!regex_match(c.shape.prompt_set, kName))
      return s.error("prompt_set", "expected a name of a folder of prompts (lowercase letters, digits, . _ -)");
    std::vector<std::string> looked;
    for (const std::string& d : suite.prompt_dirs()) {
      looked.push_back((fs::path(d) / c.shape.prompt_set).string());
      std::error_code ec;
      const fs::file_status st = fs::status(looked.back(), ec);
      if (fs::is_directory(st)) break;
      if (ec && st.type() != fs::file_type::not_found)  // a symlink loop, a folder it may not enter
        return s.error("prompt_set", looked.back() + ": cannot read the prompt set folder: " + ec.message());
    }
    if (std::none_of(looked.begin(), looked.end(), [](const std::string& d) { std::error_code ec; return fs::is_directory(d, ec); }))
      return s.error("prompt_set", "no such prompt set folder: " + join(looked, " or "));
  }
  if (s.has("output_tokens") && s.has("max_output_tokens"))
    return s.error("output_tokens", "and \"max_output_tokens\" both given; give one: output_tokens (every answer exactly that long) or max_output_tokens (at most)");
  c.shape.exact_output = s.has("output_tokens");
  FP_TRY(long long out, s.integer(c.shape.exact_output ? "output_tokens" : "max_output_tokens", 1, 65536));
  c.shape.max_output_tokens = static_cast<int>(out);
  if (s.has("prompt_tokens")) {
    FP_TRY(long long n, s.integer("prompt_tokens", 1, ctx ? ctx : 1 << 22));
    c.shape.prompt_tokens = static_cast<int>(n);
    if (s.has("long_prompt"))
      return s.error("prompt_tokens", "and \"long_prompt\" both given; give one: long_prompt (a document to a number of characters) or prompt_tokens");
    if (ctx && n + out > ctx)
      return s.error("prompt_tokens", std::to_string(n) + " prompt tokens and " + std::to_string(out) + " output tokens exceed the context (" +
                                          std::to_string(ctx) + "); expected at most " + std::to_string(ctx - out));
  }
  if (s.has("long_prompt")) {
    FP_TRY(JsonFields lp, s.object("long_prompt"));
    FP_TRY_STATUS(lp.only_keys({"document", "chars"}));
    LongPrompt l;
    FP_TRY(l.document, suite_path(lp, "document", root, false));
    if (std::error_code ec; !fs::is_regular_file(fs::path(root) / l.document, ec)) return lp.error("document", "no such file under " + root);
    FP_TRY(long long chars, lp.integer("chars", 1, 64LL << 20));
    l.chars = static_cast<size_t>(chars);
    c.shape.long_prompt = l;
  }
  return ok_status();
}

Status load_launch(const JsonFields& top, Case& c) {
  FP_TRY(JsonFields l, top.object("launch"));
  FP_TRY_STATUS(l.only_keys({"argv", "env"}));
  FP_TRY(c.launch.argv, l.string_list("argv"));
  FP_TRY_STATUS(check_placeholders(l, c.launch.argv));
  if (l.has("env")) {
    FP_TRY(JsonFields env, l.object("env"));
    for (const auto& [k, v] : env.raw().items()) {
      if (!is_identifier(k, /*underscore_first=*/true))
        return env.error(k, "not a valid environment variable name");
      FP_TRY(std::string value, env.string(k));
      c.launch.env[k] = value;
    }
  }
  return ok_status();
}

Status load_attach(const JsonFields& top, Case& c) {
  FP_TRY(JsonFields a, top.object("attach"));
  FP_TRY_STATUS(a.only_keys({"endpoint", "model", "api_key_env", "log_file", "log_command", "comment"}));
  for (const char* launched_only : {"model", "launch", "flag"})
    if (top.has(launched_only))
      return top.error(launched_only, "an attached case (\"attach\") starts nothing: flashproof sends requests to the "
                                      "running server and reads its log; leave out \"model\", \"launch\" and \"flag\"");
  Attach at;
  FP_TRY(at.endpoint, a.string("endpoint"));
  const size_t host_start = at.endpoint.find("://") == std::string::npos ? 0 : at.endpoint.find("://") + 3;
  if (at.endpoint.substr(0, at.endpoint.find('/', host_start)).find('@') != std::string::npos)  // not quoted: a secret
    return make_error(a.file() + ": field \"" + a.path("endpoint") + "\": carries credentials (user:password@); they would "
                      "be written into every result: give the server's key in the variable named by api_key_env instead");
  const size_t scheme = at.endpoint.find("://");
  const std::string s = scheme == std::string::npos ? "" : at.endpoint.substr(0, scheme);
  if ((s != "http" && s != "https") || at.endpoint.size() <= scheme + 3 ||
      at.endpoint.find_first_of("?# \t") != std::string::npos)
    return a.error("endpoint", "expected the server's base URL, e.g. http://127.0.0.1:8080 "
                               "(the endpoints' paths come from the runtime data)");
  while (ends_with(at.endpoint, "/")) at.endpoint.pop_back();
  FP_TRY(at.model, a.string("model"));
  if (at.model.empty()) return a.error("model", "empty; expected the model name the server answers to (its /v1/models ids)");
  FP_TRY(at.api_key_env, a.string_or("api_key_env", ""));
  if (a.has("api_key_env") && !is_identifier(at.api_key_env, /*underscore_first=*/true))
    return make_error(a.file() + ": field \"" + a.path("api_key_env") + "\": expected the name of an environment variable "
                      "holding the API key, not the key (not quoted here: it may be one; a key is never written into a case)");
  if (a.has("log_file") && a.has("log_command"))
    return a.error("log_command", "give log_file or log_command, not both");
  FP_TRY(at.log_file, a.string_or("log_file", ""));
  if (a.has("log_file") && !fs::path(at.log_file).is_absolute())
    return a.error("log_file", "expected an absolute path (the server's log file)");
  if (a.has("log_command")) {
    FP_TRY(at.log_command, a.string_list("log_command"));
    if (at.log_command.empty() || at.log_command[0].empty())
      return a.error("log_command", "empty; expected a command and its arguments, e.g. [\"journalctl\", \"-fu\", \"llama\"]");
  }
  c.attach = at;
  return ok_status();
}

Status load_flag(const JsonFields& top, Case& c) {
  FP_TRY(JsonFields f, top.object("flag"));
  FP_TRY_STATUS(f.only_keys({"on", "off", "use"}));
  FP_TRY(c.flag.on, f.string("on"));
  FP_TRY(c.flag.off, f.string("off"));
  if (c.flag.on == c.flag.off) return f.error("off", "equals \"on\"; the two values must differ");
  FP_TRY(std::string use, f.one_of("use", {"on", "off"}));
  c.flag.use_on = use == "on";
  return ok_status();
}

Status load_expect(const JsonFields& top, Case& c) {
  FP_TRY(JsonFields e, top.object("expect"));
  FP_TRY_STATUS(e.only_keys({"fused_attention", "backend", "evidence", "degraded"}));
  FP_TRY(c.expect.fused_attention, e.boolean("fused_attention"));
  const char* backend_form = "expected a backend name as the runtime logs it (CPU, CUDA0), a list of them "
                             "([\"CUDA0\", \"CUDA1\"]) or \"all-gpus\"";
  if (e.raw().contains("backend") && e.raw()["backend"].is_array()) {
    FP_TRY(c.expect.backends, e.string_list("backend"));
    if (c.expect.backends.empty()) return e.error("backend", std::string("empty list; ") + backend_form);
  } else {
    FP_TRY(std::string one, e.string("backend"));
    c.expect.backends.clear();
    for (size_t start = 0, comma = 0; comma != std::string::npos; start = comma + 1) {  // "CUDA0,CUDA1"
      comma = one.find(',', start);
      c.expect.backends.push_back(trim(one.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    }
  }
  for (const auto& b : c.expect.backends)
    if (!is_identifier(b, /*underscore_first=*/false) && b != "all-gpus")
      return e.error("backend", quote(b) + ": " + backend_form);
  c.expect.backend = join(c.expect.backends, ",");
  if (e.has("evidence")) {
    FP_TRY(c.expect.evidence, e.string_list("evidence"));
    for (const auto& level : c.expect.evidence)
      if (level != "log" && level != "placement" && level != "kernels")
        return e.error("evidence", quote(level) + " is not an evidence level; valid: log, placement, kernels");
    if (c.expect.evidence.empty())
      return e.error("evidence", "empty list; name the levels that must yield an answer (log, placement, kernels) or leave the field out for every level the platform can produce");
  }
  if (e.has("degraded")) {
    if (!e.raw()["degraded"].is_boolean())
      return e.error("degraded", e.raw()["degraded"].dump() +
                                     " is not true or false; false: the fused path must run on the cache's own K/V types "
                                     "(\"active, degraded\" fails), true: expected degraded, or leave it out");
    if (!c.expect.fused_attention)
      return e.error("degraded", "applies to fused attention expected active only (expect.fused_attention is false)");
    FP_TRY(bool d, e.boolean("degraded"));
    c.expect.degraded = d;
  }
  return ok_status();
}

// plan.concurrency, plan.requests, plan.request_rate.
Status load_load_levels(const JsonFields& p, Case& c) {
  const char* levels_form = "expected a list of distinct whole numbers from 1 to 1024, the requests in flight at each level, e.g. [1, 4, 8]";
  if (p.has("concurrency")) {
    const nlohmann::json& list = p.raw()["concurrency"];
    if (!list.is_array() || list.empty()) return p.error("concurrency", levels_form);
    for (const auto& v : list) {
      if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1024) return p.error("concurrency", levels_form);
      const int level = static_cast<int>(v.get<long long>());
      if (std::find(c.plan.concurrency.begin(), c.plan.concurrency.end(), level) != c.plan.concurrency.end())
        return p.error("concurrency", "level " + std::to_string(level) + " given twice; " + levels_form);
      c.plan.concurrency.push_back(level);
    }
  }
  for (const char* needs_levels : {"requests", "request_rate"})
    if (p.has(needs_levels) && c.plan.concurrency.empty())
      return p.error(needs_levels, "needs \"concurrency\": the levels to run, each bounding the requests in flight (vllm bench serve's --max-concurrency)");
  FP_TRY(long long requests, p.integer_or("requests", 1, 100000, 0));
  c.plan.requests = static_cast<int>(requests);
  FP_TRY(c.plan.request_rate, p.number_or("request_rate", 0.001, 1e6, 0));
  return ok_status();
}

Status load_targets(const JsonFields& top, Case& c) {
  if (!top.has("targets")) return ok_status();
  FP_TRY(JsonFields t, top.object("targets"));
  std::set<std::string> keys(target_figure_names().begin(), target_figure_names().end());
  keys.insert("gate");
  keys.insert("comment");
  FP_TRY_STATUS(t.only_keys(keys));
  Targets targets;
  for (const auto& figure : target_figure_names()) {
    if (!t.has(figure)) continue;
    FP_TRY(double ms, t.number_or(figure, 0.001, 1e7, 0));
    targets.max_ms[figure] = ms;
  }
  if (targets.max_ms.empty())
    return t.error("", "names no target; expected at least one of " + join(target_figure_names(), ", ") + " (milliseconds)");
  FP_TRY(targets.gate, t.boolean_or("gate", false));
  c.targets = targets;
  return ok_status();
}

// The "headroom" block: {"deployed_context": N, "neighbours": [{"name", "match", "mib", "device"}]}.
Status load_headroom(const JsonFields& top, Case& c) {
  if (!top.has("headroom")) return ok_status();
  if (c.attach)
    return top.error("headroom", "an attached case has no headroom: flashproof has no model file of the server it did not start");
  FP_TRY(JsonFields h, top.object("headroom"));
  FP_TRY_STATUS(h.only_keys({"deployed_context", "neighbours", "comment"}));
  if (!h.has("deployed_context") && !h.has("neighbours"))
    return h.error("", "names nothing; expected \"deployed_context\" (the context the case is deployed with, in tokens) "
                       "and/or \"neighbours\" (the servers that share its card)");
  HeadroomPlan plan;
  FP_TRY(long long deployed, h.integer_or("deployed_context", 1, 0x7fffffff, 0));
  plan.deployed_context = static_cast<long>(deployed);
  if (h.has("neighbours")) {
    const nlohmann::json& list = h.raw()["neighbours"];
    const char* form = "expected a list of {\"name\", \"mib\", \"match\", \"device\"} objects, e.g. "
                       "[{\"name\": \"embedder\", \"mib\": 6144, \"match\": \"--port 8081\", \"device\": \"CUDA0\"}]";
    if (!list.is_array()) return h.error("neighbours", form);
    const std::string one_device = c.expect.backends.size() == 1 && c.expect.backends[0] != "all-gpus" ? c.expect.backends[0] : "";
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = h.path("neighbours") + "[" + std::to_string(i) + "]";
      if (!list[i].is_object()) return make_error(h.file() + ": field \"" + where + "\": " + form);
      JsonFields n(list[i], h.file(), where);
      FP_TRY_STATUS(n.only_keys({"name", "match", "mib", "device", "comment"}));
      NeighbourServer s;
      FP_TRY(s.name, n.string("name"));
      if (trim(s.name).empty()) return n.error("name", "empty; expected the case's name for the server (\"embedder\")");
      for (const auto& other : plan.neighbours)
        if (other.name == s.name) return n.error("name", quote(s.name) + " is given twice; each neighbour needs a name of its own");
      FP_TRY(s.match, n.string_or("match", s.name));
      if (s.match.empty()) return n.error("match", "empty; expected the server's command name or text its command line holds (\"--port 8081\")");
      if (!n.has("mib")) return n.error("mib", "missing; expected the memory the server holds when serving, in MiB (a number above 0)");
      FP_TRY(s.mib, n.number_or("mib", 1, 16.0 * 1024 * 1024, 0));
      FP_TRY(s.device, n.string_or("device", one_device));
      if (s.device.empty())
        return n.error("device", std::string("missing; expect.backend names ") + (c.expect.backend.empty() ? "no device" : quote(c.expect.backend)) +
                                     ", so name the neighbour's: a backend name as the runtime logs it (CPU, CUDA0)");
      if (!is_identifier(s.device, /*underscore_first=*/false))
        return n.error("device", quote(s.device) + ": expected a backend name as the runtime logs it (CPU, CUDA0)");
      plan.neighbours.push_back(s);
    }
    if (plan.neighbours.empty()) return h.error("neighbours", std::string("empty list; ") + form + ", or leave the field out");
  }
  c.headroom = plan;
  return ok_status();
}

// A minimum effect or guard as a case writes it: a fraction (the figure's default floor kept) or
// {"relative": r, "floor": x} (x in the figure's unit; absent: the default floor).
Result<MinEffect> parse_effect(const JsonFields& parent, const std::string& figure, Job job) {
  const nlohmann::json& v = parent.raw()[figure];
  const std::string valid = "a fraction from 0.001 to 10 (e.g. 0.05), or {\"relative\": 0.05, \"floor\": X} with X >= 0 in the figure's unit";
  // The floor of the figure the key gates today: a key named before a figure was replaced
  // (gpu_kernel_ms, per launch) takes its replacement's floor (gpu_kernel_ms_per_token's, per token).
  MinEffect e = default_min_effect(job, gated_figure_name(figure));
  if (v.is_number()) {
    FP_TRY(e.relative, parent.number_or(figure, 0.001, 10, kDefaultMinEffect));
    return e;
  }
  if (!v.is_object()) return parent.error(figure, "expected " + valid);
  FP_TRY(JsonFields o, parent.object(figure));
  FP_TRY_STATUS(o.only_keys({"relative", "floor"}));
  if (!o.has("relative")) return o.error("", "missing field \"relative\"; expected " + valid);
  FP_TRY(e.relative, o.number_or("relative", 0.001, 10, kDefaultMinEffect));
  FP_TRY(e.floor, o.number_or("floor", 0, 1e9, e.floor));
  return e;
}

Status load_plan(const JsonFields& top, Case& c) {
  if (!top.has("plan")) return ok_status();
  FP_TRY(JsonFields p, top.object("plan"));
  FP_TRY_STATUS(p.only_keys({"warmup", "repetitions", "timeout_s", "ready_timeout_s", "stall_timeout_s", "min_effect",
                             "guards", "gated", "blocks", "max_blocks", "budget_s", "concurrency", "requests", "request_rate"}));
  FP_TRY(long long w, p.integer_or("warmup", 0, 1000, c.plan.warmup));
  FP_TRY(long long r, p.integer_or("repetitions", 1, 100000, c.plan.repetitions));
  c.plan.warmup = static_cast<int>(w);
  c.plan.repetitions = static_cast<int>(r);
  FP_TRY(c.plan.timeout_s, p.number_or("timeout_s", 5, 7 * 86400, c.plan.timeout_s));
  // Unless given, the launch may take at most half of the case's time (and at most the default).
  c.plan.ready_timeout_s = std::min(c.plan.ready_timeout_s, c.plan.timeout_s / 2);
  FP_TRY(c.plan.ready_timeout_s, p.number_or("ready_timeout_s", 1, 3600, c.plan.ready_timeout_s));
  if (c.plan.ready_timeout_s >= c.plan.timeout_s) return p.error("ready_timeout_s", "must be less than timeout_s");
  FP_TRY(c.plan.stall_timeout_s, p.number_or("stall_timeout_s", 0.5, 3600, std::min(c.plan.stall_timeout_s, c.plan.timeout_s)));
  if (p.has("min_effect")) {
    FP_TRY(JsonFields m, p.object("min_effect"));
    for (const auto& [figure, value] : m.raw().items()) {
      if (!regex_match(figure, kName))
        return m.error(figure, "expected a figure name such as ttft_ms or itl_ms");
      FP_TRY(c.plan.min_effect[figure], parse_effect(m, figure, c.job));
    }
  }
  if (p.has("guards")) {
    FP_TRY(JsonFields g, p.object("guards"));
    const auto& felt = user_felt_figures();
    for (const auto& [figure, value] : g.raw().items()) {
      if (std::find(felt.begin(), felt.end(), figure) == felt.end())
        return g.error(figure, "is not a figure a user feels; guards apply to " + join(felt, ", "));
      if (value.is_boolean() && !value.get<bool>()) {
        c.plan.guards[figure] = std::nullopt;
        continue;
      }
      if (value.is_boolean())
        return g.error(figure, "expected false (no guard), a fraction from 0.001 to 10, or {\"relative\": r, \"floor\": x}");
      FP_TRY(MinEffect e, parse_effect(g, figure, c.job));
      c.plan.guards[figure] = e;
    }
  }
  if (p.has("gated")) {
    FP_TRY(c.plan.gated, p.string_list("gated"));
    const auto& known = paired_figure_names();
    for (auto& g : c.plan.gated) {
      // A figure's old name reads as its own (itl_ms: itl_mean_ms), and a figure no engine measures any
      // more as the one that replaced it (gpu_kernel_ms: gpu_kernel_ms_per_token).
      g = gated_figure_name(g);
      if (std::find(known.begin(), known.end(), g) == known.end())
        return p.error("gated", "unknown figure \"" + g + "\"; expected one of " + join(known, ", "));
    }
  }
  FP_TRY(long long blocks, p.integer_or("blocks", 2, 1000, c.plan.blocks));
  if (blocks % 2) return p.error("blocks", "must be even, so that the ABBA order is balanced (" + std::to_string(blocks) + " given)");
  c.plan.blocks = static_cast<int>(blocks);
  FP_TRY(long long max_blocks, p.integer_or("max_blocks", c.plan.blocks, 10000, std::max(c.plan.blocks, c.plan.max_blocks)));
  c.plan.max_blocks = static_cast<int>(max_blocks);
  FP_TRY(c.plan.budget_s, p.number_or("budget_s", 1, 7 * 86400, c.plan.budget_s));
  return load_load_levels(p, c);
}

Status load_ab(const JsonFields& top, Case& c) {
  if (!top.has("ab")) return ok_status();
  FP_TRY(JsonFields a, top.object("ab"));
  FP_TRY_STATUS(a.only_keys({"repetitions", "rounds", "warmup", "sustained", "mechanism", "comment"}));
  FP_TRY(long long reps, a.integer_or("repetitions", 1, 1000, c.ab.repetitions));
  c.ab.repetitions = static_cast<int>(reps);
  FP_TRY(long long rounds, a.integer_or("rounds", 1, 100000, c.plan.repetitions));
  c.ab.rounds = static_cast<int>(rounds);
  FP_TRY(long long warmup, a.integer_or("warmup", 0, 1000, c.plan.warmup));
  c.ab.warmup = static_cast<int>(warmup);
  if (a.has("sustained")) {
    FP_TRY(JsonFields s, a.object("sustained"));
    FP_TRY_STATUS(s.only_keys({"duration_s", "concurrency"}));
    FP_TRY(c.ab.sustained_s, s.number_or("duration_s", 0, 86400, c.ab.sustained_s));
    FP_TRY(long long conc, s.integer_or("concurrency", 1, 1024, c.ab.concurrency));
    c.ab.concurrency = static_cast<int>(conc);
  }
  if (a.has("mechanism")) {
    const nlohmann::json& list = a.raw()["mechanism"];
    if (!list.is_array()) return a.error("mechanism", "expected an array of {\"figure\", \"expect\", \"at_least\"} objects");
    const auto& names = ab_figure_names();
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = a.path("mechanism") + "[" + std::to_string(i) + "]";
      if (!list[i].is_object()) return make_error(a.file() + ": field \"" + where + "\": expected an object");
      JsonFields m(list[i], a.file(), where);
      FP_TRY_STATUS(m.only_keys({"figure", "expect", "at_least", "tolerance", "why"}));
      MechanismStatement st;
      FP_TRY(st.figure, m.one_of("figure", names));
      FP_TRY(std::string expect, m.one_of("expect", {"faster", "slower", "higher", "lower", "unchanged"}));
      for (MechanismExpect e :
           {MechanismExpect::faster, MechanismExpect::slower, MechanismExpect::higher, MechanismExpect::lower, MechanismExpect::unchanged})
        if (expect == to_string(e)) st.expect = e;
      FP_TRY(st.at_least, m.number_or("at_least", 0, 100, st.at_least));
      FP_TRY(st.tolerance, m.number_or("tolerance", 0, 100, st.tolerance));
      if (st.expect == MechanismExpect::unchanged && m.has("at_least"))
        return m.error("at_least", "applies to faster, slower, higher or lower; \"unchanged\" takes \"tolerance\"");
      FP_TRY(std::string why, m.string_or("why", ""));
      (void)why;
      c.ab.mechanism.push_back(st);
    }
  }
  c.has_ab = true;
  return ok_status();
}

}  // namespace

const std::vector<std::string>& target_figure_names() {
  static const std::vector<std::string> names = {"ttft_ms", "tpot_ms", "e2e_ms"};
  return names;
}

bool Case::has_workload() const {
  return shape.prompt_tokens > 0 || shape.exact_output || !plan.concurrency.empty() || targets.has_value();
}

const std::vector<std::string>& ab_figure_names() {
  static const std::vector<std::string> names = figure_names(kAbEngine);
  return names;
}

const std::vector<std::string>& paired_figure_names() {
  static const std::vector<std::string> names = figure_names(kPairedEngine);
  return names;
}

namespace {

// The entry of `m` whose key covers `figure` (its base name equal to the key, or starting with the
// key and "_"); the longest key wins; nullptr when none does.
template <typename T>
const T* covering(const std::map<std::string, T>& m, const std::string& figure) {
  const std::string name = base_figure_name(figure);
  const T* best = nullptr;
  size_t best_len = 0;
  for (const auto& [key, value] : m)
    if ((name == key || starts_with(name, key + "_")) && (!best || key.size() > best_len)) {
      best = &value;
      best_len = key.size();
    }
  return best;
}

// As covering, and where nothing covers `figure`, what covers its old name (a case written before
// the figure got its own name: plan.min_effect "itl_ms" applies to itl_mean_ms).
template <typename T>
const T* covering_or_old(const std::map<std::string, T>& m, const std::string& figure) {
  if (const T* e = covering(m, figure)) return e;
  const FigureDef* d = figure_def(figure);
  return d && !d->old_name.empty() ? covering(m, std::string(d->old_name)) : nullptr;
}

}  // namespace

std::optional<MinEffect> case_min_effect(const Case& c, const std::string& figure) {
  if (const MinEffect* e = covering_or_old(c.plan.min_effect, figure)) return *e;
  return std::nullopt;
}

MinEffect min_effect(const Case& c, const std::string& figure) {
  if (auto e = case_min_effect(c, figure)) return *e;
  return default_min_effect(c.job, figure);
}

std::optional<MinEffect> guard_effect(const Case& c, const std::string& figure) {
  if (const std::optional<MinEffect>* g = covering_or_old(c.plan.guards, figure)) return *g;
  return default_guard(c.job, figure);
}

const char* to_string(MechanismExpect e) {
  switch (e) {
    case MechanismExpect::faster: return "faster";
    case MechanismExpect::slower: return "slower";
    case MechanismExpect::higher: return "higher";
    case MechanismExpect::lower: return "lower";
    case MechanismExpect::unchanged: return "unchanged";
  }
  return "unchanged";
}

const char* job_name(Job job) {
  switch (job) {
    case Job::Chat: return "chat";
    case Job::Completion: return "completion";
    case Job::Extraction: return "extraction";
    case Job::Batch: return "batch";
  }
  return "?";
}

FigureJob figure_job(Job job) {
  switch (job) {
    case Job::Chat: return kChatJob;
    case Job::Completion: return kCompletionJob;
    case Job::Extraction: return kExtractionJob;
    case Job::Batch: return kBatchJob;
  }
  return kChatJob;
}

const std::vector<std::string>& known_placeholders() {
  static const std::vector<std::string> names = {"runtime", "model", "host", "port", "context", "flag", "seed"};
  return names;
}

Result<Case> load_case(const std::string& path, const Suite& suite) {
  FP_TRY(std::string text, read_file(path));
  return parse_case_text(text, path, suite);
}

Result<Case> parse_case_text(const std::string& text, const std::string& path, const Suite& suite) {
  FP_TRY(nlohmann::json j, parse_json_object(text, path));
  JsonFields top(j, path);
  FP_TRY_STATUS(top.only_keys({"name", "description", "job", "runtime", "model", "shape", "launch", "flag",
                               "expect", "plan", "seed", "labels", "comment", "ctest", "ab", "targets", "attach", "headroom"}));
  Case c;
  c.file = path;
  FP_TRY(c.name, top.string("name"));
  if (!regex_match(c.name, kName)) return top.error("name", "expected lowercase letters, digits, '.', '_' or '-' (at most 81)");
  const std::string stem = fs::path(path).stem().string();
  if (c.name != stem) return top.error("name", "must equal the file's name without .json (" + quote(stem) + "), so that no two cases share a name");
  FP_TRY(c.description, top.string_or("description", ""));
  FP_TRY(c.job, parse_job(top));
  FP_TRY(c.runtime, top.string("runtime"));
  if (!regex_match(c.runtime, kName)) return top.error("runtime", "expected a runtime name such as llama-server");
  if (top.has("attach")) FP_TRY_STATUS(load_attach(top, c));
  if (!c.attach) FP_TRY_STATUS(load_model(top, suite.root, c));
  FP_TRY_STATUS(load_shape(top, suite, c));
  if (!c.attach) {
    FP_TRY_STATUS(load_launch(top, c));
    FP_TRY_STATUS(load_flag(top, c));
  }
  FP_TRY_STATUS(load_expect(top, c));
  FP_TRY_STATUS(load_plan(top, c));
  FP_TRY_STATUS(load_targets(top, c));
  FP_TRY_STATUS(load_headroom(top, c));
  c.ab.rounds = c.plan.repetitions;
  c.ab.warmup = c.plan.warmup;
  FP_TRY_STATUS(load_ab(top, c));
  if (c.attach && c.has_ab)
    return top.error("ab", "an attached case cannot run A/B: flashproof does not start the server, so it cannot set the flag");
  FP_TRY(long long seed, top.integer_or("seed", 0, 0x7fffffff, c.seed));
  c.seed = static_cast<int>(seed);
  if (top.has("labels")) {
    FP_TRY(c.labels, top.string_list("labels"));
    for (const auto& l : c.labels)
      if (!regex_match(l, kName)) return top.error("labels", "label " + quote(l) + " is not valid; expected lowercase letters, digits, . _ -");
  }
  if (top.has("ctest")) {
    // Read by CMake only (cmake/FlashproofCases.cmake); validated here so a typo is caught early.
    FP_TRY(JsonFields t, top.object("ctest"));
    FP_TRY_STATUS(t.only_keys({"expect_exit", "expect_output"}));
    FP_TRY(long long code, t.integer("expect_exit", 1, 255));
    (void)code;
    FP_TRY(std::vector<std::string> patterns, t.string_list("expect_output"));
    if (patterns.empty()) return t.error("expect_output", "expected at least one pattern the failure must print");
    c.self_test = true;
  }
  return c;
}

}  // namespace fp
