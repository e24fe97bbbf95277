#include "runtime/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client/http_client.h"
#include "runtime/ctest_gpus.h"
#include "util/text.h"
#include "util/seconds_since.h"
#include "util/utf8.h"
#include "util/regex.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> read_env_file(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq != std::string::npos) out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return out;
}

std::string getenv_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

RuntimeCommand with_loader(const std::string& exe, const std::string& loader, const std::string& libs, std::string how) {
  RuntimeCommand cmd;
  if (!loader.empty()) cmd.prefix = {loader, "--library-path", libs};
  cmd.prefix.push_back(exe);
  cmd.how_found = std::move(how);
  return cmd;
}

}  // namespace

Result<RuntimeCommand> locate_runtime(const Adapter& adapter) {
  if (const char* exe = std::getenv(adapter.executable_var.c_str()); exe && *exe) {
    if (::access(exe, X_OK) != 0)
      return make_error("$" + adapter.executable_var + " = " + quote(exe) + ": not an executable file");
    return with_loader(exe, getenv_or("FLASHPROOF_LOADER", ""), getenv_or("FLASHPROOF_LIBRARY_PATH", ""),
                       "$" + adapter.executable_var);
  }
  const std::string env_file = getenv_or("FLASHPROOF_CACHE", "/var/cache/flashproof") + "/env.sh";
  auto vars = read_env_file(env_file);
  if (vars.count(adapter.executable_var)) {
    const std::string exe = vars[adapter.executable_var];
    if (::access(exe.c_str(), X_OK) != 0)
      return make_error(env_file + ": " + adapter.executable_var + " = " + quote(exe) +
                        ": not an executable file; run ci/setup.sh again");
    return with_loader(exe, vars["FLASHPROOF_LOADER"], vars["FLASHPROOF_LIBRARY_PATH"], env_file);
  }
  const std::string path = getenv_or("PATH", "");
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    fs::path candidate = fs::path(path.substr(start, end - start)) / adapter.executable_name;
    if (!candidate.parent_path().empty() && ::access(candidate.c_str(), X_OK) == 0)
      return with_loader(candidate.string(), "", "", "PATH");
    start = end + 1;
  }
  return make_error("runtime " + quote(adapter.name) + " not found: set $" + adapter.executable_var +
                    ", or run ci/setup.sh (writes " + env_file + "), or put " + adapter.executable_name + " on PATH");
}

namespace {

// PREFIX/usr/lib/<triplet>/ld-linux*.so.* -> {loader, libdir}; empty when there is none.
std::pair<std::string, std::string> prefix_loader(const fs::path& prefix) {
  std::error_code ec;
  const fs::path lib = prefix / "usr" / "lib";
  if (!fs::is_directory(lib, ec)) return {};
  for (const auto& triplet : fs::directory_iterator(lib, ec)) {
    if (!triplet.is_directory(ec)) continue;
    for (const auto& f : fs::directory_iterator(triplet.path(), ec)) {
      const std::string name = f.path().filename().string();
      if (starts_with(name, "ld-linux") && name.find(".so") != std::string::npos && ::access(f.path().c_str(), X_OK) == 0)
        return {f.path().string(), triplet.path().string()};
    }
  }
  return {};
}

}  // namespace

Result<RuntimeCommand> runtime_from_path(const std::string& path, const Adapter& adapter) {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  fs::path exe, prefix;
  if (fs::is_directory(p, ec)) {
    for (const char* sub : {"usr/bin", "bin"}) {
      const fs::path c = p / sub / adapter.executable_name;
      if (::access(c.c_str(), X_OK) == 0) {
        exe = c;
        prefix = p;
        break;
      }
    }
    if (exe.empty())
      return make_error(path + ": a runtime folder must hold usr/bin/" + adapter.executable_name + " or bin/" +
                        adapter.executable_name + " (a prefix as ci/setup.sh lays it out); neither is there");
  } else if (fs::is_regular_file(p, ec)) {
    if (::access(p.c_str(), X_OK) != 0) return make_error(path + ": not an executable file");
    exe = p;
    if (p.parent_path().filename() == "bin" && p.parent_path().parent_path().filename() == "usr")
      prefix = p.parent_path().parent_path().parent_path();
  } else {
    return make_error(path + ": no such runtime: expected an executable file or a prefix folder holding usr/bin/" +
                      adapter.executable_name);
  }
  if (!prefix.empty()) {
    auto [loader, libdir] = prefix_loader(prefix);
    if (!loader.empty())
      return with_loader(exe.string(), loader, libdir + ":" + libdir + "/llama", "the runtime named " + path);
  }
  return with_loader(exe.string(), "", "", "the runtime named " + path);
}

Result<RuntimeOutput> runtime_output(const RuntimeCommand& cmd, const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& env, const std::string& scratch_dir) {
  RuntimeOutput out;
  out.argv = cmd.prefix;
  out.argv.insert(out.argv.end(), args.begin(), args.end());
  // One private folder per call (mkdtemp: a new name, mode 0700): concurrent flashproof processes and
  // threads share the scratch folder, and a predictable name there could be taken first by another
  // user (a symlink the runtime's output would be written through).
  std::string dir_template = scratch_dir + "/flashproof-runtime-output.XXXXXX";
  if (!::mkdtemp(dir_template.data()))
    return make_error(scratch_dir + ": cannot make a private folder for the runtime's output: " + std::strerror(errno));
  const std::string dir = dir_template;
  const std::string log = dir + "/output.txt";
  std::error_code ec;
  auto p = Process::spawn(out.argv, env, log);
  if (!p) {
    fs::remove_all(dir, ec);
    return p.error();
  }
  auto t0 = Clock::now();
  while (p->running() && seconds_since(t0) < 20) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  out.exit = p->stop(1.0).describe();
  // Noted (util/utf8.h) under what was run, not under the scratch file's random name.
  auto bytes = read_file(log);
  fs::remove_all(dir, ec);
  if (!bytes) return bytes.error();
  const std::string exe = cmd.prefix.empty() ? std::string("the runtime") : fs::path(cmd.prefix.back()).filename().string();
  out.text = valid_utf8_noted(*bytes, "the output of `" + exe + (args.empty() ? "" : " " + join(args, " ")) + "`");
  out.tail = text_tail(out.text, 8);
  return out;
}

Result<RuntimeVersion> runtime_version(const RuntimeCommand& cmd, const Adapter& adapter, const std::string& scratch_dir) {
  FP_TRY(RuntimeOutput run, runtime_output(cmd, adapter.version_args, {}, scratch_dir));
  const std::string& out = run.text;
  RegexMatch m;
  RuntimeVersion v;
  if (!regex_search(out, Regex(adapter.version_regex), m))
    return make_error(join(run.argv, " ") + " " + run.exit + "; its output has no version matching " +
                      quote(adapter.version_regex) + ":\n" + run.tail);
  v.text = m.str(1);
  if (regex_search(out, Regex(adapter.build_regex), m)) v.build = m.str(1);
  return v;
}

Result<int> free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int e = errno;
    ::close(fd);
    return make_error(std::string("cannot find a free loopback port: ") + std::strerror(e));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

namespace {

std::vector<std::string> expand_with(const Case& c, const RuntimeCommand& runtime, const std::string& model_path,
                                     const std::string& port, const std::string& flag_value,
                                     const std::vector<std::string>& extra_args) {
  const std::map<std::string, std::string> values = {
      {"model", model_path}, {"host", "127.0.0.1"}, {"port", port},
      {"context", std::to_string(c.shape.context)}, {"flag", flag_value}, {"seed", std::to_string(c.seed)}};
  std::vector<std::string> out;
  for (const auto& a : c.launch.argv) {
    if (a == "{runtime}") {
      out.insert(out.end(), runtime.prefix.begin(), runtime.prefix.end());
      continue;
    }
    std::string s = a;
    for (const auto& [k, v] : values) {
      const std::string ph = "{" + k + "}";
      for (size_t pos = 0; (pos = s.find(ph, pos)) != std::string::npos; pos += v.size()) s.replace(pos, ph.size(), v);
    }
    out.push_back(s);
  }
  out.insert(out.end(), extra_args.begin(), extra_args.end());
  return out;
}

}  // namespace

std::vector<std::string> expand_argv(const Case& c, const RuntimeCommand& runtime, const std::string& model_path,
                                     int port, const std::string& flag_value, const std::vector<std::string>& extra_args) {
  return expand_with(c, runtime, model_path, std::to_string(port), flag_value, extra_args);
}

std::vector<std::string> shown_argv(const Case& c, const RuntimeCommand& runtime, const std::string& flag_value,
                                    const std::vector<std::string>& extra_args) {
  return expand_with(c, runtime, c.model.path, "{port}", flag_value, extra_args);
}

std::string log_tail(const std::string& path, size_t lines) {
  if (path.empty()) return "    (no log)\n";
  auto text = read_text_file(path);
  if (!text) return "    (no log: " + text.error().message + ")";
  return text_tail(*text, lines);
}

std::string text_tail(const std::string& text, size_t lines) {
  auto all = split_lines(text);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    std::string l = all[i];
    if (l.size() > 300) l = l.substr(0, utf8_cut(l, 300)) + "...";
    out += "    | " + l + "\n";
  }
  return out.empty() ? "    (the log is empty)\n" : out;
}

Result<RunningServer> start_server(LaunchSpec spec, const Adapter& adapter) { return start_server(std::move(spec), adapter, nullptr); }

Result<RunningServer> start_server(LaunchSpec spec, const Adapter& adapter, StartFailure* why) {
  const Regex port_taken(adapter.port_in_use_regex);
  // Under `ctest --resource-spec-file`, the GPUs CTest allotted this test (runtime/ctest_gpus.h).
  FP_TRY(auto ctest_gpus, ctest_gpu_ids());
  if (ctest_gpus) {
    spec.env["CUDA_VISIBLE_DEVICES"] = *ctest_gpus;
    spec.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  }
  for (int attempt = 0;; ++attempt) {
    // No runtime is started after SIGINT/SIGTERM/SIGHUP: the harness is on its way out.
    if (interrupted()) return make_error(interrupted_text() + ": no runtime started after it");
    auto t0 = Clock::now();
    FP_TRY(Process p, Process::spawn(spec.argv, spec.env, spec.log_path, spec.cgroup_procs, spec.cpus));
    RunningServer s;
    s.port = spec.port;
    s.base_url = "http://127.0.0.1:" + std::to_string(spec.port);
    s.log_path = spec.log_path;
    s.argv = spec.argv;
    std::string last;
    while (true) {
      if (interrupted()) {
        p.stop(1.0);
        return make_error(interrupted_text() + " while waiting for the runtime to become ready");
      }
      // The group, not only the child: a wrapper's child that crashed ends the launch too.
      ExitInfo e = p.runtime_end();
      if (e.exited) {
        auto log = read_file(spec.log_path);
        if (attempt < 2 && log && regex_search(*log, port_taken)) {
          FP_TRY(int port, free_loopback_port());
          for (auto& a : spec.argv)
            if (a == std::to_string(spec.port)) a = std::to_string(port);
          spec.port = port;
          break;  // retry on a new port
        }
        if (why) why->exit = e;
        return make_error("the runtime " + e.describe() + " before it was ready (after " +
                          std::to_string(seconds_since(t0)).substr(0, 5) + " s); log " + spec.log_path + " ends:\n" +
                          log_tail(spec.log_path));
      }
      // Every readiness path in order (vLLM answers /health before the model is listed).
      std::string checked;
      bool ready = true;
      const std::vector<std::string> ready_paths =
          adapter.ready_paths.empty() ? std::vector<std::string>{adapter.health_path} : adapter.ready_paths;
      for (const auto& path : ready_paths) {
        checked = s.base_url + path;
        auto r = http_get(checked, 2.0);
        if (r && r->status == 200) continue;
        last = r ? "HTTP " + std::to_string(r->status) : r.error().message;
        ready = false;
        break;
      }
      if (ready) {
        s.ready_s = seconds_since(t0);
        p.watch_group();  // the process that answered is in it by now (a wrapper's child included)
        s.process = std::move(p);
        return s;
      }
      if (seconds_since(t0) > spec.ready_timeout_s) {
        p.stop(2.0);
        if (why) why->not_ready = true;
        return make_error("the runtime was not ready within " + std::to_string(static_cast<int>(spec.ready_timeout_s)) +
                          " s (last readiness check " + checked + ": " + last + "); log " +
                          spec.log_path + " ends:\n" + log_tail(spec.log_path));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace fp
