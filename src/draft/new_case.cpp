#include "draft/new_case.h"

#include <algorithm>
#include <filesystem>

#include "report/redact.h"
#include "util/text.h"

namespace fp {
namespace {

using ojson = nlohmann::ordered_json;

bool contains(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// A whole number, or none.
std::optional<long long> whole(const std::string& s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size() || s.find_first_not_of("0123456789", i) != std::string::npos) return std::nullopt;
  return std::stoll(s);
}

std::string said(const OptionValue& v) { return v.option + " " + v.value; }

ojson backend_json(const std::vector<std::string>& backends) {
  return backends.size() == 1 ? ojson(backends.front()) : ojson(backends);
}

// The option that `arg` is, among the placeholders' options: {placeholder, option}; none otherwise.
std::optional<std::pair<std::string, std::string>> placeholder_option(const std::string& arg, const LaunchLine& rules) {
  for (const auto& [ph, options] : rules.placeholders)
    for (const auto& o : options)
      if (arg == o || starts_with(arg, o + "=")) return std::make_pair(ph, o);
  return std::nullopt;
}

const DroppedOption* dropped_option(const std::string& arg, const LaunchLine& rules) {
  for (const auto& d : rules.dropped)
    for (const auto& o : d.names)
      if (arg == o || (d.takes_value && starts_with(arg, o + "="))) return &d;
  return nullptr;
}

struct Rewritten {
  std::vector<std::string> argv;              // the case's template, "{runtime}" first
  std::map<std::string, std::string> values;  // placeholder -> the command's value (last one)
  std::vector<Decision> decisions;
};

Result<Rewritten> rewrite_args(const std::vector<std::string>& args, const LaunchLine& rules) {
  Rewritten w;
  w.argv = {"{runtime}"};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (const DroppedOption* d = dropped_option(a, rules)) {
      const bool next_is_value = d->takes_value && a.find('=') == std::string::npos;
      const std::string shown = next_is_value && i + 1 < args.size() ? a + " " + args[i + 1] : a;
      // A secret's value is never shown, not even in the decision.
      const bool secret = is_secret_name(a.substr(0, a.find('=')));
      w.decisions.push_back({"launch.argv", "without " + (secret ? a.substr(0, a.find('=')) + " ***" : shown), d->why});
      if (next_is_value) ++i;
      continue;
    }
    auto ph = placeholder_option(a, rules);
    if (!ph) {
      w.argv.push_back(a);
      continue;
    }
    const auto& [name, option] = *ph;
    if (a.size() > option.size()) {  // --opt=value
      w.values[name] = a.substr(option.size() + 1);
      w.argv.push_back(option + "={" + name + "}");
      continue;
    }
    if (i + 1 >= args.size()) return make_error(a + " has no value at the end of the command");
    w.values[name] = args[++i];
    w.argv.push_back(a);
    w.argv.push_back("{" + name + "}");
  }
  return w;
}

// The context the case states, from the command's option or the model's header.
Result<int> decide_context(const Rewritten& w, const LaunchLine& rules, const LaunchedFacts& facts, std::vector<Decision>& out) {
  const auto given = w.values.find("context");
  const std::string value = given != w.values.end() ? given->second : rules.context_default;
  const std::string option = rules.placeholders.count("context") ? rules.placeholders.at("context").front() : "context";
  const std::string how = given != w.values.end() ? option + " " + value : "no " + option + " (the runtime's default " + quote(value) + ")";
  int context = 0;
  std::string why;
  if (value.empty() || contains(rules.context_from_model, value)) {
    if (!facts.model || facts.model->trained_context <= 0)
      return make_error(how + " leaves the context to the model, but " +
                        (facts.model ? "its GGUF header states no context_length" : "its header could not be read (" + facts.model_note + ")") +
                        ": give the context explicitly (" + option + " N)");
    context = facts.model->trained_context;
    why = how + ": the runtime takes the model's trained context, " + std::to_string(context) + " (GGUF " +
          facts.model->architecture + ".context_length)";
  } else {
    auto n = whole(value);
    if (!n || *n < 128 || *n > (1 << 22)) return make_error(option + " " + quote(value) + ": expected a whole number from 128 to 4194304");
    context = static_cast<int>(*n);
    why = how + (given != w.values.end() ? "; the case passes it as {context}" : "");
    if (facts.model && facts.model->trained_context > 0 && context > facts.model->trained_context)
      why += "; note: larger than the model's trained context " + std::to_string(facts.model->trained_context);
  }
  out.push_back({"shape.context", std::to_string(context), why});
  return context;
}

}  // namespace

std::string default_prompt_set(const std::string& job) { return job == "completion" ? "code" : job; }

int default_max_output_tokens(const std::string& job) {
  if (job == "chat") return 128;
  if (job == "batch") return 32;
  return 64;
}

Result<BackendDecision> decide_backend(const std::vector<std::string>& args, const OffloadOptions& o, int layers,
                                       const std::vector<std::string>& gpus, const std::string& no_gpu_why) {
  const auto dev = find_option(args, o.device);
  const auto ngl = find_option(args, o.gpu_layers);
  const auto sm = find_option(args, o.split_mode);
  const auto mg = find_option(args, o.main_gpu);
  if (gpus.empty()) {
    std::string why = "no GPU here (" + no_gpu_why + "): every layer runs on the CPU";
    if (ngl || dev) why += ", whatever " + said(ngl ? *ngl : *dev) + " asks; on a GPU box, write the case there";
    return BackendDecision{{"CPU"}, why};
  }
  if (dev && contains(o.no_device, dev->value)) return BackendDecision{{"CPU"}, said(*dev) + ": nothing is offloaded"};
  std::vector<std::string> devices = dev ? split_commas(dev->value) : gpus;
  if (devices.empty()) return make_error(said(*dev) + ": expected a comma-separated list of devices, e.g. CUDA0,CUDA1");
  std::string where = dev ? said(*dev) : "this machine's GPUs (" + join(gpus, ", ") + ")";
  if (sm && contains(o.attention_on_main_gpu, sm->value)) {
    const std::string index = mg ? mg->value : "0";
    auto n = whole(index);
    if (!n || *n < 0 || *n >= static_cast<long long>(devices.size()))
      return make_error((mg ? said(*mg) : std::string("the main GPU 0")) + ": expected an index among the " +
                        std::to_string(devices.size()) + " devices (" + join(devices, ", ") + ")");
    devices = {devices[static_cast<size_t>(*n)]};
    where += "; " + said(*sm) + " keeps attention on the main GPU " + devices.front();
  }
  const std::string layers_value = ngl ? ngl->value : o.gpu_layers_default;
  const std::string layers_said = ngl ? said(*ngl) : "no " + (o.gpu_layers.empty() ? std::string("-ngl") : o.gpu_layers.front()) +
                                                      " (the runtime's default " + quote(o.gpu_layers_default) + ")";
  if (contains(o.all_layers, layers_value))
    return BackendDecision{devices, layers_said + ": every layer that fits goes to " + where +
                                        " (a GPU too small keeps some on the CPU: the case then fails and shows where they ran)"};
  auto n = whole(layers_value);
  if (!n || *n < 0)
    return make_error(layers_said + ": expected a number of layers or one of: " + join(o.all_layers, ", "));
  if (*n == 0) return BackendDecision{{"CPU"}, layers_said + ": no layer is offloaded"};
  if (layers > 0 && *n < layers) {
    std::vector<std::string> both = devices;
    both.push_back("CPU");
    return BackendDecision{both, layers_said + " of the model's " + std::to_string(layers) + " layers: partial offload to " +
                                     where + "; the attention of the layers left on the CPU runs there, so the CPU is expected too"};
  }
  return BackendDecision{devices, layers_said + (layers > 0 ? " covers the model's " + std::to_string(layers) + " layers" : "") +
                                      ": every layer on " + where};
}

Result<std::string> command_model_path(const std::vector<std::string>& args, const LaunchLine& rules) {
  for (const auto& a : args)
    for (const auto& [option, why] : rules.refused)
      if (a == option || starts_with(a, option + "=")) return make_error(option + ": " + why);
  if (!rules.placeholders.count("model"))
    return make_error(rules.file + ": launch_line.placeholders has no \"model\": it cannot say which option names the model");
  auto m = find_option(args, rules.placeholders.at("model"));
  if (!m || m->value.empty())
    return make_error("the command names no model file (" + join(rules.placeholders.at("model"), " or ") + " PATH)");
  return m->value;
}

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(1ull << 30));
  return buf;
}

}  // namespace

MemoryFit decide_memory(const std::vector<std::string>& args, const LaunchedFacts& facts, int context,
                        const std::vector<std::string>& backends) {
  MemoryFit out;
  if (!facts.model || !facts.kv_types || backends.empty() || context <= 0) return out;
  const ModelFacts& m = *facts.model;
  const KvPair pair = kv_pair_of(args, *facts.kv_types);
  auto cost = [&](const std::string& type) {
    KvTypeCost c{type, 1, 0};
    if (auto it = facts.kv_types->block_bytes.find(type); it != facts.kv_types->block_bytes.end()) c = {type, it->second.elements, it->second.bytes};
    return c;
  };
  const uint64_t per_token = kv_bytes_per_token({m.layers, m.n_head_kv, m.head_size_k, m.head_size_v}, cost(pair.k), cost(pair.v));
  if (per_token == 0) return out;
  const double kv = static_cast<double>(per_token) * context, weights = static_cast<double>(facts.model_bytes);
  const std::string& device = backends.front();
  auto free = std::find_if(facts.free_now.begin(), facts.free_now.end(), [&](const FreeOn& f) { return f.device == device; });
  out.text = "weights " + gib(weights) + " + KV cache " + gib(kv) + " at " + std::to_string(context) + " cells (" +
             std::to_string(m.layers) + " layers x " + std::to_string(m.n_head_kv) + " KV heads x head size " +
             std::to_string(m.head_size_k) + ", K " + pair.k + ", V " + pair.v + ": " + std::to_string(per_token) +
             " bytes a token) = " + gib(weights + kv);
  if (free == facts.free_now.end()) {
    out.text += "; free memory on " + device + " not measured here";
    return out;
  }
  const double left = static_cast<double>(free->free_bytes) - weights - kv;
  out.text += "; " + device + " has " + gib(static_cast<double>(free->free_bytes)) + " free now (" + free->source + "): ";
  if (left >= 0) {
    out.text += "fits, " + gib(left) + " left for the compute buffers and the rest";
    return out;
  }
  out.fits = false;
  const double room = static_cast<double>(free->free_bytes) - weights;
  const long cells = room > 0 ? static_cast<long>(room / static_cast<double>(per_token)) : 0;
  out.text += "DOES NOT FIT, short by " + gib(-left) + (cells > 0 ? "; about " + std::to_string(cells) + " cells would" : "") +
              " (a smaller context, a quantized cache such as -ctk q8_0 -ctv q8_0, or fewer layers on " + device + ")";
  return out;
}

Result<NewCase> draft_launched_case(const NewCaseBasics& b, const std::vector<std::string>& args, const LaunchLine& rules,
                                    const LaunchedFacts& facts, const std::string& command_shown) {
  FP_TRY(std::string model_arg, command_model_path(args, rules));
  (void)model_arg;
  if (rules.flag_on.empty())
    return make_error(rules.file + ": launch_line has no \"flag\" (its on, off and default values)");
  NewCase out;
  FP_TRY(Rewritten w, rewrite_args(args, rules));
  std::vector<Decision>& d = out.decisions;
  d.push_back({"runtime", b.runtime, "the command's runtime (src/runtime/data/" + b.runtime + ".json)"});
  d.push_back({"model.path", facts.model_path, "the command's model file"});
  d.push_back({"model.sha256", facts.sha256, "sha256 of the file (" + std::to_string(facts.model_bytes) + " bytes): a run refuses another file"});
  if (facts.model) {
    const ModelFacts& m = *facts.model;
    d.push_back({"model facts", m.architecture + ", " + std::to_string(m.layers) + " layers, head size " + std::to_string(m.head_size_k) +
                                    (m.head_size_v != m.head_size_k ? "/" + std::to_string(m.head_size_v) : "") + ", trained context " +
                                    (m.trained_context > 0 ? std::to_string(m.trained_context) : std::string("not stated")),
                 "its GGUF header (the verdict checks placement against the layers; the cause rules use the head size)"});
  } else {
    d.push_back({"model facts", "none", facts.model_note});
  }
  for (const auto& [ph, options] : rules.placeholders) {
    if (!w.values.count(ph)) continue;
    std::string why = "the command's " + options.front() + " " + w.values[ph] + " becomes {" + ph + "}";
    if (ph == "port") why += ": flashproof picks a free loopback port for every launch";
    if (ph == "host") why += ": flashproof's launches listen on 127.0.0.1 only";
    if (ph == "model") why += ": the model file above";
    if (ph == "context") why += ": shape.context below";
    if (ph == "flag") why += ": flag below (A/B turns it on and off)";
    if (ph == "seed") why += ": seed below";
    d.push_back({"launch.argv", "{" + ph + "}", why});
  }
  d.insert(d.end(), w.decisions.begin(), w.decisions.end());  // the options left out
  for (const auto& [ph, extra] : rules.added_when_missing) {
    if (w.values.count(ph)) continue;
    w.argv.insert(w.argv.end(), extra.begin(), extra.end());
    d.push_back({"launch.argv", "+ " + join(extra, " "),
                 "the command has no " + (rules.placeholders.count(ph) ? rules.placeholders.at(ph).front() : ph) +
                     "; the case needs {" + ph + "}" + (ph == "flag" ? " (the runtime's default is " + quote(rules.flag_default) + ")" : "")});
  }
  // {model} in the argv stands for the file; everything in d so far comes from w.values.
  FP_TRY(int context, decide_context(w, rules, facts, d));

  const std::string flag = w.values.count("flag") ? w.values["flag"] : rules.flag_default;
  const bool use_on = flag != rules.flag_off;
  const std::string on = flag == rules.flag_off ? rules.flag_on : flag;
  ojson flag_json = {{"on", on}, {"off", rules.flag_off}, {"use", use_on ? "on" : "off"}};
  d.push_back({"flag", "on " + quote(on) + ", off " + quote(rules.flag_off) + ", use " + (use_on ? "on" : "off"),
               use_on ? "the case launches with " + quote(on) + " as the command does" +
                            (on != rules.flag_on ? " (it may resolve either way: the verdict says which)" : "") +
                            "; flashproof ab compares it with " + quote(rules.flag_off)
                      : "the command turns the fused attention off; flashproof ab compares it with " + quote(rules.flag_on)});
  d.push_back({"expect.fused_attention", use_on ? "true" : "false",
               use_on ? "the flag asks for it: the case fails unless the evidence shows it running where expected"
                      : "the flag turns it off: the case fails if the evidence shows it running"});

  const int layers = facts.model ? facts.model->layers : 0;
  FP_TRY(BackendDecision backend, decide_backend(args, rules.offload, layers, facts.gpus, facts.no_gpu_why));
  d.push_back({"expect.backend", join(backend.backends, ","), backend.why});
  const MemoryFit memory = decide_memory(args, facts, context, backend.backends);
  if (!memory.text.empty())
    d.push_back({memory.fits ? "memory" : "warning", memory.text,
                 memory.fits ? "the compute buffers come on top (flashproof run reports them and the headroom left)"
                             : "the runtime will likely fail to start or to allocate its cache: change the command, then draft again"});

  int seed = 42;
  if (w.values.count("seed")) {
    auto s = whole(w.values["seed"]);
    if (s && *s >= 0 && *s <= 0x7fffffff) {
      seed = static_cast<int>(*s);
      d.push_back({"seed", std::to_string(seed), "the command's seed"});
    } else {
      d.push_back({"seed", "42", "the command's seed " + quote(w.values["seed"]) + " is random: answers must repeat run to run"});
    }
  }

  const std::string prompt_set = b.prompt_set.empty() ? default_prompt_set(b.job) : b.prompt_set;
  const int max_tokens = b.max_output_tokens > 0 ? b.max_output_tokens : default_max_output_tokens(b.job);
  d.push_back({"shape.prompt_set", prompt_set, b.prompt_set.empty() ? "the " + b.job + " job's prompt set" : "given (--prompt-set)"});
  d.push_back({"shape.max_output_tokens", std::to_string(max_tokens),
               b.max_output_tokens > 0 ? "given (--max-output-tokens)" : "the " + b.job + " job's default"});

  // Loading a large model takes a while: 60 s, plus 4 s per GiB, at most 30 minutes.
  const double gib = static_cast<double>(facts.model_bytes) / double(1ull << 30);
  const int ready = static_cast<int>(std::min(1800.0, 60.0 + 4.0 * gib));
  const int timeout = std::max(300, ready + 60);
  d.push_back({"plan", "warmup 1, repetitions 3, timeout_s " + std::to_string(timeout) + ", ready_timeout_s " + std::to_string(ready),
               "defaults; the time to ready allows 60 s plus 4 s per GiB of model"});

  const std::string file = std::filesystem::path(facts.model_path).filename().string();
  ojson j;
  j["name"] = b.name;
  j["description"] = b.job + " on " + file + ", from the operator's command line (flashproof new-case)";
  j["job"] = b.job;
  j["runtime"] = b.runtime;
  j["model"] = {{"path", facts.model_path}, {"sha256", facts.sha256}};
  j["shape"] = {{"context", context}, {"prompt_set", prompt_set}, {"max_output_tokens", max_tokens}};
  j["launch"] = {{"argv", w.argv}};
  j["flag"] = flag_json;
  j["expect"] = {{"fused_attention", use_on}, {"backend", backend_json(backend.backends)}};
  j["plan"] = {{"warmup", 1}, {"repetitions", 3}, {"timeout_s", timeout}, {"ready_timeout_s", ready}};
  if (w.values.count("seed")) j["seed"] = seed;
  ojson comment = ojson::array({"flashproof new-case " + utc_stamp("%Y-%m-%d") + " from: " + command_shown});
  for (const auto& x : d) comment.push_back(x.field + " = " + x.value + ": " + x.why);
  j["comment"] = comment;
  out.json = j;
  return out;
}

Result<NewCase> draft_attached_case(const NewCaseBasics& b, const AttachRequest& r) {
  NewCase out;
  std::vector<Decision>& d = out.decisions;
  ojson attach = {{"endpoint", r.endpoint}, {"model", r.model}};
  d.push_back({"attach.endpoint", r.endpoint, "given (--endpoint): requests go there as they are; flashproof starts nothing, so no cold start"});
  d.push_back({"attach.model", r.model, "given (--model): every request's \"model\" field"});
  if (!r.api_key_env.empty()) {
    attach["api_key_env"] = r.api_key_env;
    d.push_back({"attach.api_key_env", r.api_key_env,
                 "the key is read from $" + r.api_key_env + " at run time and sent as Authorization: Bearer; never written"});
  }
  if (!r.log_file.empty()) {
    attach["log_file"] = r.log_file;
    d.push_back({"attach.log_file", r.log_file, "evidence from the lines written to it after each run starts"});
  } else if (!r.log_command.empty()) {
    attach["log_command"] = r.log_command;
    d.push_back({"attach.log_command", join(r.log_command, " "),
                 "evidence from its output after each run starts (started without a shell, stopped at the end; what it "
                 "prints before it first falls quiet is its replay of older lines and is dropped)"});
  } else {
    d.push_back({"attach (log)", "none", "no --log or --log-command: every evidence level is unavailable, so the verdict is "
                                          "\"no evidence\" and the case fails; timings are still measured"});
  }
  std::vector<std::string> backends = r.expect_backend;
  std::string why = "given (--expect-backend)";
  if (backends.empty()) {
    FP_TRY(BackendDecision bd, decide_backend({}, OffloadOptions{{}, "all", {"all"}}, 0, r.gpus, r.no_gpu_why));
    backends = bd.backends;
    why = "the server is taken to run on this machine with every layer on its GPUs, if any (" + bd.why +
          "); --expect-backend names others";
  }
  d.push_back({"expect.backend", join(backends, ","), why});
  d.push_back({"expect.fused_attention", "true", "the case fails unless the evidence shows fused attention running there"});
  if (!r.required.empty())
    d.push_back({"expect.evidence", join(r.required, ","), "given (--require): a level the log cannot give fails the case with its reason"});
  else
    d.push_back({"expect.evidence", "(none)", "the log window decides; the log alone never proves fused attention active: "
                                              "--require placement makes a missing level a failure"});
  const std::string prompt_set = b.prompt_set.empty() ? default_prompt_set(b.job) : b.prompt_set;
  const int max_tokens = b.max_output_tokens > 0 ? b.max_output_tokens : default_max_output_tokens(b.job);
  d.push_back({"shape.prompt_set", prompt_set, b.prompt_set.empty() ? "the " + b.job + " job's prompt set" : "given (--prompt-set)"});
  d.push_back({"shape.max_output_tokens", std::to_string(max_tokens),
               b.max_output_tokens > 0 ? "given (--max-output-tokens)" : "the " + b.job + " job's default"});

  ojson j;
  j["name"] = b.name;
  j["description"] = b.job + " against " + r.model + " at " + r.endpoint + ", a server something else started (flashproof new-case)";
  j["job"] = b.job;
  j["runtime"] = b.runtime;
  j["attach"] = attach;
  j["shape"] = {{"prompt_set", prompt_set}, {"max_output_tokens", max_tokens}};
  ojson expect = {{"fused_attention", true}, {"backend", backend_json(backends)}};
  if (!r.required.empty()) expect["evidence"] = r.required;
  j["expect"] = expect;
  j["plan"] = {{"warmup", 1}, {"repetitions", 3}, {"timeout_s", 300}};
  ojson comment = ojson::array({"flashproof new-case " + utc_stamp("%Y-%m-%d") + " for a server something else started"});
  for (const auto& x : d) comment.push_back(x.field + " = " + x.value + ": " + x.why);
  j["comment"] = comment;
  out.json = j;
  return out;
}

}  // namespace fp
