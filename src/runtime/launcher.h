// Turns a case's argv template into a running, ready runtime on a free loopback port.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case/case_file.h"
#include "runtime/adapter.h"
#include "runtime/process.h"
#include "util/result.h"

namespace fp {

// How to start the runtime's executable: `prefix` replaces {runtime} in the argv template (for
// Debian sid's build: its own loader, --library-path, then the executable).
struct RuntimeCommand {
  std::vector<std::string> prefix;
  std::string how_found;  // for the report: which variable or file named it
};

// From $<executable_var> (+ $FLASHPROOF_LOADER, $FLASHPROOF_LIBRARY_PATH), else the file written by
// ci/setup.sh ($FLASHPROOF_CACHE/env.sh, default /var/cache/flashproof/env.sh), else PATH.
Result<RuntimeCommand> locate_runtime(const Adapter& adapter);

// A runtime named by the operator (the side-by-side gate's --baseline-runtime / --candidate-runtime):
//  - a prefix folder laid out as ci/setup.sh lays it out: PATH/usr/bin/<executable>, started through
//    PATH/usr/lib/<triplet>/ld-linux-*.so.* with --library-path <that folder>:<that folder>/llama
//    when the loader is there (Debian sid's build on an older system), else run directly;
//  - an executable file: run directly, or through its prefix's loader when it sits in such a prefix
//    (PREFIX/usr/bin/<name> with PREFIX/usr/lib/<triplet>/ld-linux-*.so.*).
// Errors name the path and what was looked for.
Result<RuntimeCommand> runtime_from_path(const std::string& path, const Adapter& adapter);

// The runtime's own version text (`--version`), and its build id, e.g. "b11669".
struct RuntimeVersion {
  std::string text;
  std::string build;
};
Result<RuntimeVersion> runtime_version(const RuntimeCommand& cmd, const Adapter& adapter, const std::string& scratch_dir);

// What the runtime prints for `args` (stdout and stderr) with `env` added, for a short command such as
// --version or --list-devices (stopped after 20 s); its output goes through a file in scratch_dir.
struct RuntimeOutput {
  std::vector<std::string> argv;
  std::string exit;   // "exited with status 0", ...
  std::string text;
  std::string tail;   // the last lines, quoted for an error message
};
Result<RuntimeOutput> runtime_output(const RuntimeCommand& cmd, const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& env, const std::string& scratch_dir);

// A free TCP port on 127.0.0.1 (bound and released; the launch retries if it was taken meanwhile).
Result<int> free_loopback_port();

struct LaunchSpec {
  std::vector<std::string> argv;              // expanded, final
  std::map<std::string, std::string> env;
  std::string log_path;
  int port = 0;
  double ready_timeout_s = 60;
  std::string cgroup_procs;  // a cgroup the runtime joins before exec (runtime/cpu_quota.h); empty: none
  std::vector<int> cpus;     // CPUs the runtime may run on; empty: any
};

// Replaces the placeholders of the case's argv (and adds the adapter's logging args).
std::vector<std::string> expand_argv(const Case& c, const RuntimeCommand& runtime, const std::string& model_path,
                                     int port, const std::string& flag_value, const std::vector<std::string>& extra_args);

// The same launch line for reports: {port} stays a placeholder and the model is the path as the case
// wrote it, so that two launches of one case print the same line (the resolved argv goes to JSON).
std::vector<std::string> shown_argv(const Case& c, const RuntimeCommand& runtime, const std::string& flag_value,
                                    const std::vector<std::string>& extra_args);

struct RunningServer {
  Process process;
  int port = 0;
  std::string base_url;
  std::string log_path;
  double ready_s = 0;  // launch to first healthy answer
  std::vector<std::string> argv;
};

// Starts the runtime and waits for health. On failure the process group is stopped and the
// error carries the reason and the log's tail. A port taken between probe and bind is retried.
Result<RunningServer> start_server(LaunchSpec spec, const Adapter& adapter);

// Why start_server failed, for a caller that tells a runtime that broke from bad input
// (flow/passes/instrument_retry.h).
struct StartFailure {
  ExitInfo exit;           // exited: the runtime ended by itself before it was ready
  bool not_ready = false;  // it ran, but did not become ready within ready_timeout_s
};
// The same, filling *why on failure.
Result<RunningServer> start_server(LaunchSpec spec, const Adapter& adapter, StartFailure* why);

// The last `lines` lines of a log file, indented, for error messages; read as text (util/utf8.h
// read_text_file: bytes that are not UTF-8 noted under the path).
std::string log_tail(const std::string& path, size_t lines = 20);
// The same of a text already read.
std::string text_tail(const std::string& text, size_t lines = 20);

}  // namespace fp
