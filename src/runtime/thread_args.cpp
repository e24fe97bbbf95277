#include "runtime/thread_args.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "runtime/launch_line.h"
#include "util/text.h"

namespace fp {

ThreadArgs thread_args_for_cpus(const Adapter& adapter, const std::vector<std::string>& case_argv, int cpus,
                                int default_threads) {
  ThreadArgs t;
  const std::string n = std::to_string(cpus);
  const std::string n_cpus = n + (cpus == 1 ? " CPU" : " CPUs");
  if (adapter.threads_args.empty()) {
    t.note = "runtime threads: the runtime data (" + adapter.data_file +
             ") has no threads_args, so the runtime sizes its own; more threads than its " + n_cpus +
             " would make launch times bimodal";
    return t;
  }
  std::vector<OptionValue> found;  // each of the options the case sets (the last occurrence of each)
  for (const auto& o : adapter.threads_options)
    if (auto v = find_option(case_argv, {o})) found.push_back(*v);
  if (!found.empty()) {
    std::string said;
    for (const auto& f : found) {
      said += (said.empty() ? "" : ", ") + f.option + " " + f.value;
      char* end = nullptr;
      const long v = std::strtol(f.value.c_str(), &end, 10);
      // llama.cpp reads -t -1 (or any value < 1) as "all the machine's CPUs".
      if (end != f.value.c_str() && *end == '\0' && (v > cpus || v < 1)) t.oversubscribed = true;
    }
    t.note = "runtime threads: the case's own (" + said + ")";
    if (t.oversubscribed)
      t.note += ", more than the " + n_cpus + " the runtime is pinned to: threads share CPUs and launch times turn "
                "bimodal; set them to " + n + " or fewer";
    return t;
  }
  if (default_threads > 0 && default_threads <= cpus) {
    t.note = "runtime threads: " + adapter.name + "'s own (" + std::to_string(default_threads) + ", " +
             (adapter.threads_default == "physical_cores" ? "the machine's physical cores" : "the machine's CPUs") +
             "), within the " + n_cpus + " it is pinned to";
    return t;
  }
  for (std::string a : adapter.threads_args) {
    for (size_t pos = 0; (pos = a.find("{threads}", pos)) != std::string::npos; pos += n.size()) a.replace(pos, 9, n);
    t.args.push_back(a);
  }
  t.note = "runtime threads: " + join(t.args, " ") + ", one per CPU it is pinned to (" + adapter.name + " would start " +
           std::to_string(default_threads) + ": " +
           (adapter.threads_default == "physical_cores" ? "the machine's physical cores" : "the machine's CPUs") + ")";
  return t;
}

int runtime_default_threads(const Adapter& adapter) {
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (adapter.threads_default != "physical_cores") return cpus;
  std::set<std::string> cores;
  for (int i = 0; i < cpus; ++i) {
    std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(i) + "/topology/thread_siblings");
    std::string mask;
    if (!(f >> mask)) return cpus;
    cores.insert(mask);
  }
  return cores.empty() ? cpus : static_cast<int>(cores.size());
}

}  // namespace fp
