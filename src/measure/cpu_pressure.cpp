#include "measure/cpu_pressure.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace fp {

std::optional<double> cpu_pressure_total_us(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("some ", 0) != 0) continue;
    const auto at = line.find("total=");
    if (at == std::string::npos) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(line.c_str() + at + 6, &end);
    if (end == line.c_str() + at + 6) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

std::optional<double> cpu_pressure_total_us() {
  std::ifstream in("/proc/pressure/cpu");
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return cpu_pressure_total_us(s.str());
}

double cpu_pressure_share(double before, double after, double wall_s) {
  if (!(wall_s > 0) || after < before) return 0;
  return std::clamp((after - before) / (wall_s * 1e6), 0.0, 1.0);
}

}  // namespace fp
