#include "support/ggml_query_runner.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "runtime/process.h"
#include "util/seconds_since.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// {loader, --library-path, LIBS} of a runtime started through its loader; empty otherwise.
std::vector<std::string> support_loader_part(const RuntimeCommand& runtime) {
  const auto& p = runtime.prefix;
  if (p.size() >= 4 && p[1] == "--library-path") return {p[0], p[1], p[2]};
  return {};
}

// Whether a folder holds ggml backend files (libggml-<name>.so, but not libggml-base): where a
// runtime built with GGML_BACKEND_DL keeps them beside its executable.
bool support_holds_backends(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (starts_with(n, "libggml-") && !starts_with(n, "libggml-base") && n.find(".so") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Result<std::string> find_ggml_query_helper() {
  if (const char* env = std::getenv("FLASHPROOF_GGML_QUERY"); env && *env) {
    if (::access(env, X_OK) != 0) return make_error("$FLASHPROOF_GGML_QUERY = " + quote(env) + ": not an executable file");
    return std::string(env);
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> looked;
  if (!ec) {
    for (const fs::path& p : {exe.parent_path() / "flashproof-ggml-query",
                              exe.parent_path().parent_path() / "lib" / "flashproof" / "flashproof-ggml-query"}) {
      if (::access(p.c_str(), X_OK) == 0) return p.string();
      looked.push_back(p.string());
    }
  }
  return make_error("the ggml query helper flashproof-ggml-query is not installed: looked at " + join(looked, ", ") +
                    " (build the target flashproof-ggml-query, or name it with $FLASHPROOF_GGML_QUERY)");
}

Result<std::string> runtime_library(const RuntimeCommand& runtime, const std::string& library, const std::string& scratch_dir) {
  if (runtime.prefix.empty()) return make_error("no runtime command");
  RuntimeCommand listing;
  std::vector<std::string> loader = support_loader_part(runtime);
  if (!loader.empty()) {
    listing.prefix = loader;
    listing.prefix.push_back("--list");
  } else {
    listing.prefix = {"ldd"};
  }
  listing.prefix.push_back(runtime.prefix.back());
  FP_TRY(RuntimeOutput out, runtime_output(listing, {}, {}, scratch_dir));
  for (const std::string& line : split_lines(out.text)) {
    const std::string t = trim(line);
    const size_t arrow = t.find(" => ");
    if (arrow == std::string::npos || !starts_with(t, library)) continue;
    std::string path = t.substr(arrow + 4);
    path = trim(path.substr(0, path.find(" (0x")));
    if (path == "not found" || path.empty())
      return make_error(join(out.argv, " ") + ": " + t.substr(0, arrow) + " is not found by the runtime's loader");
    return path;
  }
  return make_error(join(out.argv, " ") + " " + out.exit + ": the runtime links no " + library +
                    " (a static build? `flashproof support` needs ggml as the shared library the runtime loads):\n" + out.tail);
}

Result<BackendReply> ask_backends(const BackendQuestion& q, const SupportPlan& plan) {
  std::error_code ec;
  fs::create_directories(q.scratch_dir, ec);
  const std::string stem = q.scratch_dir + "/ggml-query." + std::to_string(::getpid());
  const std::string queries = stem + ".queries", answers = stem + ".answers", log = stem + ".log";
  fs::remove(answers, ec);
  FP_TRY_STATUS(write_file_atomic(queries, query_lines(plan)));
  BackendReply reply;
  reply.argv = support_loader_part(q.runtime);
  reply.argv.insert(reply.argv.end(), {q.helper, "--ggml", q.libggml, "--queries", queries, "--answers", answers});
  // Started through a loader, ggml looks for its backends beside the loader, as it does for the runtime.
  // Started directly, beside the runtime's executable, when the backends are there.
  if (support_loader_part(q.runtime).empty()) {
    const fs::path exe_dir = fs::path(q.runtime.prefix.back()).parent_path();
    if (support_holds_backends(exe_dir)) reply.argv.insert(reply.argv.end(), {"--backend-dir", exe_dir.string()});
  }
  const auto t0 = std::chrono::steady_clock::now();
  FP_TRY(Process p, Process::spawn(reply.argv, q.env, log));
  while (p.running() && seconds_since(t0) < q.timeout_s && !interrupted())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const bool timed_out = p.running();
  const ExitInfo exit = p.stop(1.0);
  reply.wall_s = seconds_since(t0);
  auto cleanup = [&] {
    for (const auto& f : {queries, answers, log}) fs::remove(f, ec);
  };
  const std::string tail = log_tail(log, 12);
  const std::string command = quote_args(reply.argv);
  if (timed_out) {
    cleanup();
    return make_error(command + ": no answer within " + std::to_string(static_cast<int>(q.timeout_s)) + " s:\n" + tail);
  }
  auto text = read_file(answers);
  if (!text) {
    cleanup();
    return make_error(command + " " + exit.describe() + " without answering:\n" + tail);
  }
  auto parsed = parse_answers(*text, plan.queries.size(), answers);
  cleanup();
  if (!parsed) return parsed.error();
  reply.answers = *parsed;
  if (!reply.answers.fatal.empty()) return make_error(command + ": " + reply.answers.fatal);
  if (exit.code != 0 || exit.signal != 0)
    return make_error(command + " " + exit.describe() + " after " + std::to_string(reply.answers.devices.size()) +
                      " device(s) and some answers (ggml aborted on a query?):\n" + tail);
  if (reply.answers.devices.empty()) return make_error(command + ": ggml loaded no backend device:\n" + tail);
  return reply;
}

}  // namespace fp
