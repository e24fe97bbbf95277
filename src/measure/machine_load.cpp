#include "measure/machine_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace fp {

std::optional<double> busy_cpu_seconds(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (double& x : v)
    if (!(in >> x)) return std::nullopt;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  if (!(ticks > 0)) return std::nullopt;
  return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / ticks;
}

std::optional<double> busy_cpu_seconds() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  return busy_cpu_seconds(line);
}

double own_cpu_seconds() {
  struct rusage u {};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

double other_load_share(double machine_busy_s, double runtime_s, double own_s, double wall_s, int cpus) {
  if (!(wall_s > 0) || cpus < 1) return 0;
  return std::clamp((machine_busy_s - runtime_s - own_s) / (wall_s * cpus), 0.0, 1.0);
}

}  // namespace fp
