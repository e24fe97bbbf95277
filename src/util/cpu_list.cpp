#include "util/cpu_list.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "util/text.h"

namespace fp {
namespace {

bool cpu_number(const std::string& s, long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 6) return false;
  *out = std::strtol(s.c_str(), nullptr, 10);
  return true;
}

}  // namespace

Result<std::vector<int>> parse_cpu_list(std::string_view text, int cpu_count) {
  const std::string all(text);
  auto bad = [&](const std::string& item, const std::string& why) {
    return make_error("CPU list " + quote(all) + ": " + (item.empty() ? "" : quote(item) + ": ") + why +
                      "; expected CPU numbers below " + std::to_string(cpu_count) + " and ranges, e.g. \"0-3,6\"");
  };
  std::vector<int> out;
  size_t start = 0;
  while (start <= all.size()) {
    const size_t comma = all.find(',', start);
    const std::string item = trim(all.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? all.size() + 1 : comma + 1;
    if (item.empty()) return bad("", "an empty item");
    const size_t dash = item.find('-');
    long lo = 0, hi = 0;
    if (dash == std::string::npos) {
      if (!cpu_number(item, &lo)) return bad(item, "not a CPU number");
      hi = lo;
    } else if (!cpu_number(item.substr(0, dash), &lo) || !cpu_number(item.substr(dash + 1), &hi)) {
      return bad(item, "not a range of CPU numbers");
    } else if (hi < lo) {
      return bad(item, "the range runs backwards");
    }
    if (hi >= cpu_count) return bad(item, "this machine has CPUs 0-" + std::to_string(cpu_count - 1));
    for (long c = lo; c <= hi; ++c) out.push_back(static_cast<int>(c));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return out;
}

}  // namespace fp
