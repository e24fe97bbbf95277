#include "flow/passes/case_context.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "case/prompt_fit.h"
#include "evidence/log_records.h"
#include "evidence/placement.h"
#include "evidence/verdict.h"
#include "flow/passes/gpu_machine.h"
#include "flow/passes/gpu_probe.h"
#include "golden/fingerprint.h"
#include "measure/nvml.h"
#include "report/redact.h"
#include "runtime/ctest_gpus.h"
#include "runtime/launch_line.h"
#include "runtime/runtime_data.h"
#include "util/file_hash_cache.h"
#include "util/model_files.h"
#include "util/text.h"
#include "util/regex.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// The case's name when it names a model file that is not on this machine (the loader then fails;
// the case is skipped with its message, or failed where it was set up here: judge_missing_model),
// else "". The name is the file's stem when the case does not give one.
std::string model_missing(const std::string& case_path, const std::string& suite_root) {
  auto text = read_file(case_path);  // never blocks: a named pipe is refused (util/text.h)
  if (!text) return "";
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object() || !j["model"].contains("path") || !j["model"]["path"].is_string())
    return "";
  const fs::path model = j["model"]["path"].get<std::string>();
  std::error_code ec;
  if (fs::exists(model.is_absolute() ? model : fs::path(suite_root) / model, ec)) return "";
  if (j.contains("name") && j["name"].is_string() && !j["name"].get<std::string>().empty()) return j["name"].get<std::string>();
  return fs::path(case_path).stem().string();
}

// A golden of `case_name` recorded on this machine's hardware under `golden_root`: its file (or
// folder), else "".
std::string golden_of_this_machine(const std::string& golden_root, const std::string& case_name) {
  std::error_code ec;
  if (golden_root.empty() || !fs::is_directory(golden_root, ec)) return "";
  const Fingerprint here = machine_fingerprint();
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(golden_root, ec))
    if (e.is_directory(ec)) folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  for (const auto& dir : folders) {
    auto recorded = load_fingerprint((dir / "fingerprint.json").string());
    if (!recorded || !same_hardware(*recorded, here)) continue;
    for (const fs::path& p : {dir / (case_name + ".json"), dir / case_name})
      if (fs::exists(p, ec)) return p.string();
  }
  return "";
}

// Why a case cannot run on this machine, or "" when it can: the case expects GPU backends
// (flow/passes/gpu_machine.h gpus_needed) and NVML sees no GPU, or fewer than it needs. A skip, never a
// pass; on a machine that declares its GPUs, a failure. The replay test double
// (FLASHPROOF_TEST_DOUBLE_GPU=1) stands in for the GPU.
std::string missing_gpu(const Case& c, const RuntimeSignatures& sigs, const std::optional<GpuDeclaration>& box) {
  const int needed = gpus_needed(c, sigs, box ? box->gpus : 1);
  if (needed == 0) return "";
  if (const char* td = std::getenv(kTestDoubleGpuVar); td && std::string(td) == "1") return "";
  auto nvml = Nvml::open();
  if (!nvml) return "case expects backend " + c.expect.backend + " but no NVIDIA GPU is usable here: " + nvml_reason(nvml.error());
  auto n = nvml->gpu_count();
  if (!n) return "case expects backend " + c.expect.backend + " but NVML cannot count the GPUs: " + nvml_reason(n.error());
  if (*n == 0) return "case expects backend " + c.expect.backend + " but NVML lists no GPU";
  if (static_cast<int>(*n) < needed)
    return "case expects backend " + c.expect.backend + ", which needs " + std::to_string(needed) + " GPUs, but NVML lists " +
           std::to_string(*n);
  if (box && static_cast<int>(*n) < box->gpus)
    return "this machine declares " + std::to_string(box->gpus) + " GPUs (" + box->source + ") but NVML lists " + std::to_string(*n);
  return "";
}

// Why a case cannot run here for want of a device, or "": every expected backend that is neither the
// host (CPU) nor a GPU NVML counts (CUDA<n>, checked above) — a Vulkan device, an RPC server — must
// be among the devices the runtime lists when started with the case's own launch environment
// (adapter list_devices_args; a runtime that cannot list its devices is not asked).
Result<std::string> missing_device(const CaseContext& ctx) {
  const Case& c = ctx.c;
  std::vector<std::string> wanted;
  for (const auto& b : c.expect.backends) {
    if (b == "CPU" || b == kAllGpus) continue;
    if (ctx.signatures.gpu_backend && regex_match(b, ctx.signatures.gpu_backend->regex)) continue;
    wanted.push_back(b);
  }
  if (wanted.empty() || ctx.adapter.list_devices_args.empty()) return std::string();
  const std::string scratch = fs::temp_directory_path().string();
  auto listing = runtime_output(ctx.runtime, ctx.adapter.list_devices_args, c.launch.env, scratch.empty() ? "/tmp" : scratch);
  if (!listing) return make_error("asking the runtime for its devices: " + listing.error().message);
  const RunBackends listed = run_backends(split_records(listing->text, ctx.signatures), ctx.signatures);
  std::vector<std::string> missing;
  for (const auto& w : wanted)
    if (std::find(listed.names().begin(), listed.names().end(), w) == listed.names().end()) missing.push_back(w);
  if (missing.empty()) return std::string();
  std::vector<std::string> env;
  for (const auto& [k, v] : c.launch.env) env.push_back(k + "=" + v);
  return "case expects backend " + join(missing, ",") + " but `" + ctx.adapter.executable_name + " " +
         join(ctx.adapter.list_devices_args, " ") + "`" + (env.empty() ? "" : " (with the case's launch.env " + join(env, " ") + ")") +
         " lists " + (listed.names().empty() ? std::string("no device") : join(listed.names(), ", "));
}

// Every file of the model (each shard of a split GGUF) against the case's sha256, through the hash
// cache (util/file_hash_cache.h). This is the only read of the model file flashproof makes, and it
// happens here, before anything is launched: a cache hit reads nothing; a miss reads the file once
// and leaves the page cache as it found it (util/sha256.h), so the runtime's loads that follow
// (evidence pass, timed launches) meet the model in the same cache state as without the hash.
Status check_model_files(const Case& c, const std::string& model_path, bool rehash) {
  auto files = model_files(model_path);
  if (!files) return make_error(c.file + ": field \"model.path\": " + files.error().message);
  if (files->size() != c.model.shard_sha256.size())
    return make_error(c.file + ": field \"model.sha256\": " + std::to_string(c.model.shard_sha256.size()) + " value(s) for " +
                      std::to_string(files->size()) + " model file(s)");
  for (size_t i = 0; i < files->size(); ++i) {
    const std::string& file = (*files)[i];
    auto hash = cached_sha256_file(file, rehash);
    if (!hash) return make_error(c.file + ": field \"model.path\": " + hash.error().message);
    if (hash->sha256 == c.model.shard_sha256[i]) continue;
    const std::string which = files->size() == 1 ? "" : " (shard " + std::to_string(i + 1) + " of " + std::to_string(files->size()) + ")";
    return make_error(c.file + ": field \"model.sha256" + (files->size() == 1 ? "" : "[" + std::to_string(i) + "]") + "\" = " +
                      c.model.shard_sha256[i] + " but " + file + which + " has sha256 " + hash->sha256 +
                      (hash->from_cache ? " (cached; --rehash reads it again)" : "") +
                      " (a different model file: regenerate it or update the case)");
  }
  return ok_status();
}

// The case's prompts: its prompt set, or that many synthetic prompts (filled by flow/passes/prompt_tokens.h).
// A prompt that cannot fit shape.context is refused here, before anything is launched: no token
// stands for more bytes than the longest token of the model's vocabulary (read from its GGUF header),
// or kBytesPerTokenUnknownVocabulary where there is none at hand (an attached server).
Result<std::vector<Prompt>> case_prompts(const Case& c, const Suite& suite, const std::optional<ModelFacts>& model) {
  if (c.shape.synthetic_prompts > 0) return synthetic_prompts(c.shape.synthetic_prompts);
  const PromptLimit limit = model && model->longest_token_bytes > 0
                                ? prompt_limit(c.shape.context, model->longest_token_bytes, "the longest token of the model's vocabulary")
                                : prompt_limit(c.shape.context, kBytesPerTokenUnknownVocabulary, "no vocabulary at hand: a bound above any tokenizer's");
  auto prompts = load_prompt_set(suite, c.shape.prompt_set, c.shape.long_prompt, limit);
  if (!prompts) return make_error(c.file + ": field \"shape.prompt_set\": " + prompts.error().message);
  return *prompts;
}

// Why the case file did not load: a skip when its model is not on this machine, else bad input.
ResolvedCase load_failure(const std::string& case_path, const Suite& suite, const Error& error) {
  if (const std::string name = model_missing(case_path, suite.root); !name.empty())
    return ResolvedCase::skip_missing_model("model not on this machine: " + error.message, name);
  return error;
}

// The name requests carry in their "model" field: the case's model.served_name, else what the
// runtime's launch line says the server answers to (runtime/launch_line.h).
std::string launched_served_model(const CaseContext& ctx) {
  if (!ctx.c.model.served_name.empty()) return ctx.c.model.served_name;
  auto rules = load_launch_line(ctx.c.runtime);
  return served_model_name(rules ? &*rules : nullptr, ctx.c.launch.argv, ctx.model_path);
}

// An attached case: the adapter (endpoints, request fields), the signatures and the prompts; the API
// key from its variable. No runtime, no model file, no GPU check: the server may be on another box.
Result<CaseContext> resolve_attached(const Case& c, const Suite& suite) {
  CaseContext ctx;
  ctx.c = c;
  ctx.suite = suite;
  auto adapter = load_adapter(c.runtime);
  if (!adapter) return make_error(c.file + ": field \"runtime\": " + adapter.error().message);
  ctx.adapter = *adapter;
  FP_TRY(ctx.signatures, load_runtime_signatures(c.runtime));
  FP_TRY(ctx.metrics, load_metrics_data(c.runtime));
  ctx.runtime.how_found = "attached to " + c.attach->endpoint + " (started by something else)";
  ctx.served_model = c.attach->model;
  if (!c.attach->api_key_env.empty()) {
    const char* key = std::getenv(c.attach->api_key_env.c_str());
    if (!key || !*key)
      return make_error(c.file + ": field \"attach.api_key_env\" = " + quote(c.attach->api_key_env) + ": $" +
                        c.attach->api_key_env + " is not set or empty; export the server's API key in it before the run");
    ctx.request_headers.push_back(std::string("Authorization: Bearer ") + key);
  }
  FP_TRY(ctx.prompts, case_prompts(c, suite, std::nullopt));
  ctx.model_note = "attached: no model file here, no GGUF header read";
  return ctx;
}

ResolvedCase resolve_launched(const Case& loaded, const Suite& suite, const std::string& runtime_path, bool rehash) {
  CaseContext ctx;
  ctx.c = loaded;
  ctx.suite = suite;
  const Case& c = ctx.c;
  auto adapter = load_adapter(c.runtime);
  if (!adapter) return make_error(c.file + ": field \"runtime\": " + adapter.error().message);
  ctx.adapter = *adapter;
  FP_TRY(ctx.signatures, load_runtime_signatures(c.runtime));
  FP_TRY(ctx.metrics, load_metrics_data(c.runtime));
  for (const auto& a : ctx.metrics.launch_args)  // the runtime's own gauges, on in every timed launch
    if (std::find(ctx.adapter.timed_args.begin(), ctx.adapter.timed_args.end(), a) == ctx.adapter.timed_args.end())
      ctx.adapter.timed_args.push_back(a);
  auto runtime = runtime_path.empty() ? locate_runtime(ctx.adapter) : runtime_from_path(runtime_path, ctx.adapter);
  if (!runtime && !runtime_path.empty()) return runtime.error();
  if (!runtime) {
    // Named explicitly but broken is an error; not installed anywhere is a skip, with the reason.
    const char* named = std::getenv(ctx.adapter.executable_var.c_str());
    if (named && *named) return runtime.error();
    return ResolvedCase::skip(runtime.error().message);
  }
  ctx.runtime = *runtime;
  ctx.model_path = fs::path(c.model.path).is_absolute() ? c.model.path : (fs::path(suite.root) / c.model.path).string();
  FP_TRY(ctx.gpu_box, declared_gpus());
  if (std::string why = missing_gpu(c, ctx.signatures, ctx.gpu_box); !why.empty()) {
    if (ctx.gpu_box)  // a GPU box may not skip (flow/passes/gpu_machine.h)
      return make_error("GPU box (" + ctx.gpu_box->source + ") cannot run this GPU case: " + why);
    return ResolvedCase::skip(why);
  }
  FP_TRY(std::string no_device, missing_device(ctx));
  if (!no_device.empty()) {  // a skip even on a GPU box: its declaration counts NVIDIA GPUs, not these devices
    return ResolvedCase::skip(no_device);
  }
  FP_TRY_STATUS(check_model_files(c, ctx.model_path, rehash));
  if (auto facts = read_model_facts(ctx.model_path)) ctx.model = *facts;
  else ctx.model_note = facts.error().message;
  FP_TRY(ctx.prompts, case_prompts(c, suite, ctx.model));
  if (!ctx.signatures.gpu_backend_format.empty())
    for (int i = 0; i < visible_gpus(); ++i) ctx.gpu_backends.push_back(ctx.signatures.gpu_backend_name(i));
  ctx.served_model = launched_served_model(ctx);
  return ctx;
}

}  // namespace

ResolvedCase resolve_case_context(const std::string& case_path, const Suite& suite, const std::string& runtime_path, bool rehash) {
  auto c = load_case(case_path, suite);
  if (!c) return load_failure(case_path, suite, c.error());
  if (c->attach)
    return make_error(c->file + ": an attached case (\"attach\") runs with `flashproof run` only: A/B and the gates "
                      "launch the runtime themselves");
  return resolve_launched(*c, suite, runtime_path, rehash);
}

ResolvedCase resolve_run_context(const std::string& case_path, const Suite& suite, bool rehash) {
  auto c = load_case(case_path, suite);
  if (!c) return load_failure(case_path, suite, c.error());
  if (c->attach) {
    auto attached = resolve_attached(*c, suite);
    if (!attached) return attached.error();
    return *attached;
  }
  return resolve_launched(*c, suite, "", rehash);
}

ResolvedCase judge_missing_model(ResolvedCase resolved, const std::string& golden_root) {
  const std::string name = resolved.missing_model_case();
  if (name.empty()) return resolved;
  std::string why = resolved.error().message;
  if (starts_with(why, "SKIP: ")) why = why.substr(6);
  const std::string golden = golden_of_this_machine(golden_root, name);
  if (!golden.empty())
    return ResolvedCase(make_error(why + "; but this machine has a golden for case " + quote(name) + " (" + golden +
                                   "): the case was set up here and its deployed model is gone, a failure, not a skip; "
                                   "put the model back, or remove that golden if the case is retired on this machine"));
  return ResolvedCase::skip(why + "; no golden of this machine holds case " + quote(name) + " (" +
                            (golden_root.empty() ? std::string("no golden folder") : golden_root) +
                            "): the case was never set up here");
}

LaunchPlacement LaunchPlacement::below(const std::string& sub) const {
  LaunchPlacement p = *this;
  p.out_dir += "/" + sub;
  return p;
}

LaunchPlacement case_placement(const CaseContext& ctx, const std::string& out_dir) {
  LaunchPlacement p;
  p.out_dir = out_dir;
  if (!ctx.c.attach) p.flag_value = ctx.c.flag.used();
  return p;
}

std::vector<std::string> timed_launch_args(const CaseContext& ctx, const LaunchPlacement& at) {
  std::vector<std::string> args = ctx.adapter.timed_args;
  args.insert(args.end(), at.timed_args.begin(), at.timed_args.end());
  return args;
}

std::map<std::string, std::string> launch_env(const CaseContext& ctx, const LaunchPlacement& at) {
  std::map<std::string, std::string> env = ctx.c.launch.env;
  for (const auto& [key, value] : at.env) env[key] = value;
  return env;
}

std::vector<std::string> shown_launch(const CaseContext& ctx, const LaunchPlacement& at, const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = redact_argv(shown_argv(ctx.c, ctx.runtime, at.flag_value, extra_args));
  for (auto& a : argv) a = with_placeholder(a, ctx.suite.root, "{suite}");
  return argv;
}

Result<Fingerprint> case_fingerprint(const Case& c, const Adapter& adapter, const RuntimeCommand& runtime,
                                     const std::string& model_sha256) {
  Fingerprint f = machine_fingerprint();
  f.runtime = c.runtime;
  f.model_sha256 = model_sha256;
  f.launch = join(c.launch.argv, " ");
  const std::string scratch = fs::temp_directory_path().string();
  auto version = runtime_version(runtime, adapter, scratch.empty() ? "/tmp" : scratch);
  if (!version) return make_error("runtime version: " + version.error().message);
  f.runtime_version = version->text;
  f.runtime_build = version->build;
  return f;
}

}  // namespace fp
