// flashproof new-case NAME --job JOB -- RUNTIME ARG...    a case from the operator's launch command
// flashproof new-case NAME --job JOB --endpoint URL ...   a case for a server something else started
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "draft/new_case.h"
#include "flow/passes/gpu_machine.h"
#include "golden/threshold_policy.h"
#include "measure/free_memory.h"
#include "measure/nvml.h"
#include "model/gguf_reader.h"
#include "report/redact.h"
#include "runtime/adapter.h"
#include "runtime/attached_data.h"
#include "runtime/kv_cache_types.h"
#include "runtime/launcher.h"
#include "runtime/runtime_data.h"
#include "util/file_hash_cache.h"
#include "util/shell_word.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

const char* kNewCaseUsageText =
    "usage: flashproof new-case NAME --job JOB [options] -- RUNTIME ARG...\n"
    "       flashproof new-case NAME --job JOB --endpoint URL --model MODEL [--api-key-env VAR]\n"
    "                                [--log FILE | --log-command CMD...] [options]\n"
    "Writes NAME.json in the suite's cases folder and prints every field it decided, and why; the case\n"
    "is validated by the loader `flashproof run` uses. The first form reads the command you launch the runtime with (RUNTIME\n"
    "a path, or a runtime name such as llama-server): host, port, model, context, flag and seed become\n"
    "placeholders, the model's sha256 and GGUF header (head size, layers, trained context) are read, and\n"
    "expect.backend follows the offload options and this machine's GPUs. The second form attaches to a\n"
    "server something else started (systemd, a container, Kubernetes): runs send requests to URL as it\n"
    "is (no launch, no cold start) and read evidence only from the log lines written after they start.\n\n"
    "options:\n"
    "  --job JOB               chat | completion | extraction | batch (required)\n"
    "  --runtime NAME          the runtime data to use (src/runtime/data/NAME.json); default: the name of\n"
    "                          RUNTIME's executable, or llama-server for --endpoint\n"
    "  --prompt-set SET        a prompt set of the suite's prompts, else of flashproof's (default: the job's:\n"
    "                          chat, code, extraction, batch)\n"
    "  --max-output-tokens N   tokens per answer (default: chat 128, batch 32, others 64)\n"
    "  --force                 replace an existing case file\n"
    "  --out FILE              write FILE (named NAME.json) instead of the suite's cases/NAME.json; its relative\n"
    "                          paths (model) still name files of the suite\n"
    FP_ROOT_OPTION_USAGE
    "attached server:\n"
    "  --endpoint URL          the server's base URL, e.g. http://127.0.0.1:8080\n"
    "  --model MODEL           the model name requests carry (the server's /v1/models id)\n"
    "  --api-key-env VAR       the variable holding the API key, read at run time (never written)\n"
    "  --log FILE              the server's log file (e.g. its --log-file, or stdout redirected)\n"
    "  --log-command CMD...    a command printing the log, e.g. journalctl -fu llama, docker logs -f NAME,\n"
    "                          kubectl logs -f POD (everything after it; no shell)\n"
    "  --expect-backend LIST   where fused attention must run (CPU, CUDA0, CUDA0,CUDA1); default: this\n"
    "                          machine's GPUs, else CPU\n"
    "  --require LEVELS        evidence levels that must yield an answer (log, placement, kernels)\n"
    "exit: 0 written, 2 bad input (nothing written), 64 usage\n";

int new_case_failed(const std::string& message) {
  std::cerr << "flashproof new-case: " << message << "\n";
  return 2;
}

// Memory free now, per device as the runtime names it: the host (CPU) and each GPU NVML sees.
std::vector<FreeOn> free_memory_now(const std::string& runtime) {
  std::vector<FreeOn> out;
  const FreeMemory fm = read_free_memory(Nvml::open());
  if (fm.host_available_bytes) out.push_back({"CPU", *fm.host_available_bytes, "host MemAvailable"});
  auto sigs = load_runtime_signatures(runtime);
  if (!sigs || sigs->gpu_backend_format.empty()) return out;
  for (const auto& [index, bytes] : fm.gpu_free_bytes) {
    const auto name = fm.gpu_names.find(index);
    out.push_back({sigs->gpu_backend_name(static_cast<int>(index)), bytes,
                   "NVML, GPU " + std::to_string(index) + (name == fm.gpu_names.end() ? "" : " " + name->second)});
  }
  return out;
}

// This machine's GPUs as the runtime names them (CUDA0, ...), and why there are none.
std::vector<std::string> machine_gpus(const std::string& runtime, std::string* why_none) {
  std::vector<std::string> names;
  auto sigs = load_runtime_signatures(runtime);
  if (!sigs || sigs->gpu_backend_format.empty()) {
    *why_none = "the runtime data names no GPU backend";
    return names;
  }
  for (int i = 0; i < visible_gpus(); ++i) names.push_back(sigs->gpu_backend_name(i));
  if (names.empty()) {
    auto nvml = Nvml::open();
    *why_none = nvml ? "NVML lists no GPU" : "NVML: " + nvml_reason(nvml.error());
  }
  return names;
}

void print_decisions(const std::vector<Decision>& decisions) {
  for (const auto& d : decisions) std::cout << "  " << d.field << " = " << d.value << "\n      " << d.why << "\n";
}

// Which runtime RUNTIME is, and how runs will find its executable.
struct RuntimeChoice {
  std::string name;
  std::vector<Decision> notes;
  // What a run needs in its environment to start this runtime, when runs would not find it by
  // themselves (neither $VAR, the setup's env.sh nor PATH names it): VAR=VALUE, in order.
  std::vector<std::pair<std::string, std::string>> env;
};

// The variables that make locate_runtime (runtime/launcher.h) start `given`: the executable, and the
// loader and its library path where the runtime needs sid's loader (a setup.sh prefix).
std::vector<std::pair<std::string, std::string>> runtime_env(const RuntimeCommand& given, const Adapter& adapter) {
  std::vector<std::pair<std::string, std::string>> env{{adapter.executable_var, given.prefix.back()}};
  const bool loader = given.prefix.size() >= 4 && given.prefix[1] == "--library-path";
  const char* set = std::getenv("FLASHPROOF_LOADER");
  if (loader || (set && *set)) {
    env.push_back({"FLASHPROOF_LOADER", loader ? given.prefix[0] : ""});
    env.push_back({"FLASHPROOF_LIBRARY_PATH", loader ? given.prefix[2] : ""});
  }
  return env;
}

Result<RuntimeChoice> choose_runtime(const std::string& runtime_arg, const std::string& runtime_option) {
  RuntimeChoice rc;
  const bool is_path = runtime_arg.find('/') != std::string::npos;
  rc.name = !runtime_option.empty() ? runtime_option : fs::path(runtime_arg).filename().string();
  auto adapter = load_adapter(rc.name);
  if (!adapter)
    return make_error("RUNTIME " + quote(runtime_arg) + ": " + adapter.error().message +
                      (runtime_option.empty() ? "; name the runtime data with --runtime NAME" : ""));
  auto found = locate_runtime(*adapter);
  std::string found_exe = found ? found->prefix.back() : "";
  if (!is_path) {
    rc.notes.push_back({"{runtime}", found ? found_exe : "not found here",
                        found ? "runs resolve " + rc.name + " through " + found->how_found
                              : found.error().message + " (the case is written all the same)"});
    if (found)
      if (auto v = runtime_version(*found, *adapter, fs::temp_directory_path().string()))
        rc.notes.push_back({"runtime version", v->text, found_exe + " " + join(adapter->version_args, " ")});
    return rc;
  }
  FP_TRY(RuntimeCommand given, runtime_from_path(runtime_arg, *adapter));
  std::error_code ec;
  const bool same = found && fs::equivalent(found_exe, given.prefix.back(), ec);
  if (!same) rc.env = runtime_env(given, *adapter);
  std::vector<std::string> assignments;
  for (const auto& [var, value] : rc.env) assignments.push_back(var + "=" + shell_word(value));
  rc.notes.push_back({"{runtime}", given.prefix.back(),
                      same ? "the command's executable; runs find the same one through " + found->how_found
                           : "the command's executable; runs resolve {runtime} through $" + adapter->executable_var +
                                 ", the setup's env.sh or PATH (" + (found ? "now " + found_exe : std::string("none found now")) +
                                 "): the next lines export " + join(assignments, " ") + " to run this one (ctest too)"});
  if (auto v = runtime_version(given, *adapter, fs::temp_directory_path().string()))
    rc.notes.push_back({"runtime version", v->text, given.prefix.back() + " " + join(adapter->version_args, " ")});
  return rc;
}

// The model file as the case writes it: relative to the suite root when inside it, else absolute.
std::string case_model_path(const fs::path& absolute, const std::string& root) {
  std::error_code ec;
  const fs::path rel = fs::weakly_canonical(absolute, ec).lexically_relative(fs::weakly_canonical(root, ec));
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return absolute.string();
}

struct Options {
  std::string name, job, runtime, prompt_set;
  int max_output_tokens = 0;
  bool force = false;
  std::string out;
  std::string root;                  // --root
  std::vector<std::string> command;  // RUNTIME ARG...
  AttachRequest attach;
  bool attached = false;
};

Result<NewCase> draft_launched(const Options& o, const std::string& root, std::vector<Decision>& notes,
                               std::vector<std::pair<std::string, std::string>>& env) {
  FP_TRY(RuntimeChoice rc, choose_runtime(o.command.front(), o.runtime));
  env = rc.env;
  notes = rc.notes;
  FP_TRY(LaunchLine rules, load_launch_line(rc.name));
  const std::vector<std::string> args(o.command.begin() + 1, o.command.end());
  FP_TRY(std::string model_arg, command_model_path(args, rules));
  const fs::path model = fs::absolute(model_arg);
  std::error_code ec;
  if (!fs::is_regular_file(model, ec)) return make_error("the model file " + model.string() + " (from the command) does not exist here");
  LaunchedFacts facts;
  facts.model_path = case_model_path(model, root);
  facts.model_bytes = fs::file_size(model, ec);
  std::cerr << "flashproof new-case: sha256 of " << model.string() << " ...\n";
  auto sha = cached_sha256_file(model.string(), /*rehash=*/false);  // the run that follows meets it cached
  if (!sha) return make_error("the model file: " + sha.error().message);
  facts.sha256 = sha->sha256;
  if (auto m = read_model_facts(model.string())) facts.model = *m;
  else facts.model_note = m.error().message;
  facts.gpus = machine_gpus(rc.name, &facts.no_gpu_why);
  if (auto types = load_kv_cache_types(rc.name)) facts.kv_types = *types;
  facts.free_now = free_memory_now(rc.name);
  const std::string shown = join(redact_argv(o.command), " ");
  return draft_launched_case({o.name, o.job, rc.name, o.prompt_set, o.max_output_tokens}, args, rules, facts, shown);
}

Result<NewCase> draft_attached(Options o, std::vector<Decision>& notes) {
  const bool given = !o.runtime.empty();
  if (!given) o.runtime = "llama-server";
  auto adapter = load_adapter(o.runtime);
  if (!adapter) return make_error("--runtime " + quote(o.runtime) + ": " + adapter.error().message);
  notes.push_back({"runtime", o.runtime, std::string(given ? "given (--runtime)" : "the default (--runtime NAME for another)") +
                                             ": its data gives the endpoints' paths and the log's wordings"});
  if (!o.attach.log_file.empty()) {
    o.attach.log_file = fs::absolute(o.attach.log_file).string();
    if (::access(o.attach.log_file.c_str(), R_OK) != 0)
      notes.push_back({"warning", o.attach.log_file, "not readable now: a run fails until it is"});
  }
  if (!o.attach.api_key_env.empty() && !std::getenv(o.attach.api_key_env.c_str()))
    notes.push_back({"warning", "$" + o.attach.api_key_env, "not set now: export the server's API key in it before a run"});
  if (o.attach.expect_backend.empty()) o.attach.gpus = machine_gpus(o.runtime, &o.attach.no_gpu_why);
  FP_TRY(NewCase drafted, draft_attached_case({o.name, o.job, o.runtime, o.prompt_set, o.max_output_tokens}, o.attach));
  // What a run can and cannot see of this server: said now, and again in every result.
  if (auto data = load_attached_data(o.runtime); data && (!o.attach.log_file.empty() || !o.attach.log_command.empty()))
    for (const auto& [level, why] : data->hints) drafted.decisions.push_back({"evidence: " + level, "may be unavailable", why});
  return drafted;
}

// Whether `path` lies inside the folder `root` (a run finds the suite by walking up from the case).
bool inside(const std::string& path, const std::string& root) {
  std::error_code ec;
  const fs::path rel = fs::weakly_canonical(path, ec).lexically_relative(fs::weakly_canonical(root, ec));
  return !rel.empty() && *rel.begin() != "..";
}

// What to type next, as shell commands a second run passes with: the runtime's variables where runs
// would not find it, the first run that records this machine's golden, then the plain run.
std::vector<std::string> next_lines(const std::string& path, const std::string& root, const std::string& root_option,
                                    const std::vector<std::pair<std::string, std::string>>& env, bool attached) {
  std::vector<std::string> out;
  if (!env.empty()) {
    std::vector<std::string> a;
    for (const auto& [var, value] : env) a.push_back(var + "=" + shell_word(value));
    out.push_back("next: export " + join(a, " "));
    out.push_back("      # runs and ctest find {runtime} through these: put them in the environment of every run");
  }
  const std::string run = "flashproof run " + shell_word(path) + (root_option.empty() ? "" : " --root " + shell_word(root_option));
  out.push_back("next: " + run + " --record-missing");
  out.push_back(attached ? "      # records what an attached server allows: reference answers, the verdict, and figures whose noise "
                           "band comes from separated rounds of requests in this one run (no relaunch)"
                         : "      # records this machine's golden (" + std::to_string(kDefaultGoldenLaunches) +
                               " fresh launches: their spread is the noise band), reference answers and the verdict");
  out.push_back("next: " + run);
  out.push_back("      # compares with it; keep golden/ of " + root + " in your repository");
  return out;
}

}  // namespace

int new_case_command(int argc, char** argv) {
  Options o;
  Args args("new-case", argc, argv, kNewCaseUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kNewCaseUsageText;
      return 0;
    } else if (a == "--") {
      o.command = args.rest();
    } else if (a == "--job") {
      o.job = args.value();
      if (o.job != "chat" && o.job != "completion" && o.job != "extraction" && o.job != "batch")
        args.usage_error("--job " + quote(o.job) + ": expected chat, completion, extraction or batch");
    } else if (a == "--runtime") {
      o.runtime = args.value();
    } else if (a == "--prompt-set") {
      o.prompt_set = args.value();
    } else if (a == "--max-output-tokens") {
      o.max_output_tokens = args.whole(1, 65536);
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "--out") {
      o.out = args.value();
    } else if (a == "--root") {
      o.root = args.value();
    } else if (a == "--endpoint") {
      o.attach.endpoint = args.value();
      o.attached = true;
    } else if (a == "--model") {
      o.attach.model = args.value();
    } else if (a == "--api-key-env") {
      o.attach.api_key_env = args.value();
    } else if (a == "--log") {
      o.attach.log_file = args.value();
    } else if (a == "--log-command") {
      o.attach.log_command = args.rest();
      if (o.attach.log_command.empty()) args.usage_error("--log-command needs a command, e.g. --log-command journalctl -fu llama");
    } else if (a == "--expect-backend") {
      o.attach.expect_backend = split_commas(args.value());
    } else if (a == "--require") {
      o.attach.required = split_commas(args.value());
    } else if (args.is_option()) {
      args.usage_error("unknown option " + quote(a));
    } else if (o.name.empty()) {
      o.name = a;
    } else {
      args.usage_error("unexpected argument " + quote(a) + "; the launch command goes after --");
    }
  }
  if (o.name.empty()) args.usage_error("name the case (NAME: lowercase letters, digits, . _ -)");
  if (o.job.empty()) args.usage_error("--job is required: chat, completion, extraction or batch");
  if (o.attached == !o.command.empty())
    args.usage_error(o.attached ? "give either -- RUNTIME ARG... or --endpoint, not both"
                                : "give the launch command after -- (RUNTIME ARG...), or --endpoint URL for a running server");
  if (o.attached && o.attach.model.empty()) args.usage_error("--endpoint needs --model MODEL (the name requests carry)");
  if (!o.attach.log_file.empty() && !o.attach.log_command.empty()) args.usage_error("give --log or --log-command, not both");
  if (!o.attached && (!o.attach.model.empty() || !o.attach.log_file.empty() || !o.attach.log_command.empty() ||
                      !o.attach.api_key_env.empty() || !o.attach.required.empty() || !o.attach.expect_backend.empty()))
    args.usage_error("--model, --api-key-env, --log, --log-command, --expect-backend and --require go with --endpoint");

  // The suite this command writes into (case/suite.h): --root, else found from here (or from --out) up.
  auto suite = command_suite(o.root, o.out.empty() ? std::vector<std::string>{} : std::vector<std::string>{o.out});
  if (!suite) return new_case_failed(suite.error().message);
  const std::string& root = suite->root;
  const std::string path = o.out.empty() ? suite->cases + "/" + o.name + ".json" : fs::absolute(o.out).string();
  if (fs::path(path).filename() != o.name + ".json")
    args.usage_error("--out " + quote(o.out) + ": the file must be named " + o.name + ".json (a case's name is its file's)");
  std::error_code ec;
  if (fs::exists(path, ec) && !o.force) return new_case_failed(path + " exists; --force replaces it");

  std::vector<Decision> notes;
  std::vector<std::pair<std::string, std::string>> env;
  auto drafted = o.attached ? draft_attached(o, notes) : draft_launched(o, root, notes, env);
  if (!drafted) return new_case_failed(drafted.error().message);
  const std::string text = drafted->json.dump(2) + "\n";
  // The loader `run` uses, on the text before it is written: a case that would not load is never written.
  if (auto c = parse_case_text(text, path, *suite); !c) return new_case_failed("the drafted case does not load: " + c.error().message);
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (auto st = write_file_atomic(path, text); !st) return new_case_failed(st.error().message);
  if (auto c = load_case(path, *suite); !c) return new_case_failed("written, but it does not load: " + c.error().message);

  std::cout << "flashproof new-case: wrote " << path << " (it loads as `flashproof run` loads it)\n";
  print_decisions(notes);
  print_decisions(drafted->decisions);
  for (const auto& line : next_lines(path, root, o.root.empty() && inside(path, root) ? "" : root, env, o.attached))
    std::cout << line << "\n";
  return 0;
}

}  // namespace fp
