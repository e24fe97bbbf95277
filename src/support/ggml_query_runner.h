// Runs the ggml query helper (flashproof-ggml-query, src/ggml_query/) in the runtime's own world:
// started the way the launcher starts the runtime (for Debian sid's build: sid's loader with the
// runtime's --library-path), given the libggml the runtime's executable links (the loader's --list,
// or ldd), so that the answers are those of the very libraries and backends the case launches.
#pragma once

#include <map>
#include <string>

#include "runtime/launcher.h"
#include "support/support_plan.h"
#include "util/result.h"

namespace fp {

// The helper: $FLASHPROOF_GGML_QUERY, else beside the flashproof executable (a build tree), else
// <prefix>/lib/flashproof/ (installed). The error names every place looked at.
Result<std::string> find_ggml_query_helper();

// The path of the library named `library` (a soname prefix: "libggml.so") among those the runtime's
// executable links, as its loader resolves them: `LOADER --library-path LIBS --list EXE`, or
// `ldd EXE` when the runtime starts without a loader. Errors quote the listing.
Result<std::string> runtime_library(const RuntimeCommand& runtime, const std::string& library, const std::string& scratch_dir);

struct BackendQuestion {
  RuntimeCommand runtime;                   // how the runtime starts (its loader and library path)
  std::string helper;                       // find_ggml_query_helper()
  std::string libggml;                      // runtime_library(..., "libggml.so")
  std::map<std::string, std::string> env;   // the case's launch.env and --env (GGML_BACKEND_PATH, ...)
  std::string scratch_dir;                  // the query, answer and log files go here, removed after
  double timeout_s = 120;                   // loading a GPU backend takes seconds; the queries microseconds
};

struct BackendReply {
  SupportAnswers answers;
  std::vector<std::string> argv;  // the helper's command line, for the result
  double wall_s = 0;              // the helper's whole run: loading the libraries and backends, asking
};

// Writes the plan's queries, runs the helper, reads its answers. An error when the helper cannot
// start, times out, dies before answering, or says it cannot ask (fatal): with its output's tail.
Result<BackendReply> ask_backends(const BackendQuestion& q, const SupportPlan& plan);

}  // namespace fp
