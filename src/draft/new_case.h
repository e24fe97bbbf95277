// `flashproof new-case`: a case file drafted from what the operator already has, a launch command or
// a running server, with every decision and its reason. Pure: the command line, the runtime's
// launch-line data (runtime/launch_line.h) and what was found on this machine (the model file's
// sha256 and GGUF header, the GPUs) go in; the case's JSON and the decisions come out. The caller
// validates it with the case loader and writes it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/kv_headroom.h"
#include "model/gguf_reader.h"
#include "runtime/kv_cache_types.h"
#include "runtime/launch_line.h"
#include "util/result.h"

namespace fp {

// One decided field: its value as written and why.
struct Decision {
  std::string field, value, why;
};

struct NewCase {
  nlohmann::ordered_json json;
  std::vector<Decision> decisions;
};

// What every new case shares.
struct NewCaseBasics {
  std::string name, job, runtime;
  std::string prompt_set;     // "" : the job's default (default_prompt_set)
  int max_output_tokens = 0;  // 0 : the job's default
};

// The prompt set and output length a job gets unless told: chat -> chat, completion -> code,
// extraction -> extraction, batch -> batch.
std::string default_prompt_set(const std::string& job);
int default_max_output_tokens(const std::string& job);

// Where the layers run, from the offload options of a command and this machine's GPUs (their
// backend names, CUDA0...): the backends expect.backend lists, and why.
struct BackendDecision {
  std::vector<std::string> backends;
  std::string why;
};
Result<BackendDecision> decide_backend(const std::vector<std::string>& args, const OffloadOptions& offload, int model_layers,
                                       const std::vector<std::string>& gpus, const std::string& no_gpu_why);

// What new-case found on this machine for a launched case.
struct LaunchedFacts {
  std::string model_path;                 // as the case writes it (relative to the suite root when inside it)
  std::string sha256;
  uint64_t model_bytes = 0;
  std::optional<ModelFacts> model;        // from the GGUF header
  std::string model_note;                 // why there are no facts
  std::vector<std::string> gpus;          // this machine's GPUs as backend names
  std::string no_gpu_why;                 // when there are none
  std::optional<KvCacheTypes> kv_types;   // the runtime's cache types and their sizes (its data)
  std::vector<FreeOn> free_now;           // memory free now per device ("CPU", "CUDA0"), where read
};

// Whether the model's weights and its KV cache at `context` fit the memory free now on the device
// that holds them (the first of `backends`), in words: "weights 2.79 GiB + KV cache 1.00 GiB at 32768
// cells (...) = 3.79 GiB; CPU has 17.9 GiB free now (host MemAvailable): fits, 14.1 GiB left". Empty
// when the shape or the free memory is not known. The compute buffers come on top: it says so.
struct MemoryFit {
  std::string text;
  bool fits = true;
};
MemoryFit decide_memory(const std::vector<std::string>& args, const LaunchedFacts& facts, int context,
                        const std::vector<std::string>& backends);

// The model file a command names (its placeholder option's value); an error when it names none or
// carries a refused option (a download, a router server).
Result<std::string> command_model_path(const std::vector<std::string>& args, const LaunchLine& rules);

// A launched case from `args` (the command after the runtime): host, port, model, context, flag and
// seed become placeholders, the options the harness sets itself are dropped, and the shape, flag,
// expectation and plan are decided. `command_shown` is the operator's command, secrets redacted.
Result<NewCase> draft_launched_case(const NewCaseBasics& basics, const std::vector<std::string>& args,
                                    const LaunchLine& rules, const LaunchedFacts& facts, const std::string& command_shown);

// A case for a server something else started.
struct AttachRequest {
  std::string endpoint, model, api_key_env, log_file;
  std::vector<std::string> log_command;
  std::vector<std::string> expect_backend;  // given; else from this machine's GPUs
  std::vector<std::string> gpus;            // this machine's GPUs as backend names
  std::string no_gpu_why;
  std::vector<std::string> required;        // expect.evidence; empty: none required
};
Result<NewCase> draft_attached_case(const NewCaseBasics& basics, const AttachRequest& req);

}  // namespace fp
