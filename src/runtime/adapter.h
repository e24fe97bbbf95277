// What the harness needs to know to drive one runtime (launch, readiness, endpoints, logging
// levels), read from the "adapter" part of src/runtime/data/<runtime>.json: data, not code.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/result.h"

namespace fp {

struct Adapter {
  std::string name;                         // e.g. llama-server
  std::string data_file;
  std::string executable_var;               // env var naming the executable, e.g. FLASHPROOF_LLAMA_SERVER
  std::string executable_name;              // looked up in PATH when nothing else names it
  std::string health_path;                  // 200 when ready
  std::vector<std::string> ready_paths;     // GET in order, each must answer 200 (vLLM: /health then
                                            // /v1/models); key "ready_paths", default {health_path}
  std::string chat_path, completion_path;   // OpenAI-compatible streaming endpoints
  std::vector<std::string> version_args;    // e.g. --version
  std::string version_regex;                // capture 1: the version text to record
  std::string build_regex;                  // capture 1: the build id (for fingerprints)
  std::vector<std::string> timed_args;      // cheap logging that still prints the resolved flag
  std::vector<std::string> evidence_args;   // verbose logging for the evidence pass
  std::map<std::string, std::string> evidence_env;
  std::string port_in_use_regex;            // log wording when the port was taken
  std::vector<std::string> list_devices_args;  // prints the devices the runtime sees, e.g. --list-devices;
                                               // empty: it cannot say (key "list_devices_args")
  nlohmann::json request_extras;            // merged into every request body
};

Result<Adapter> load_adapter(const std::string& runtime);
Result<Adapter> load_adapter_file(const std::string& path, const std::string& runtime);

}  // namespace fp
