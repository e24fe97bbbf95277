#include "evidence/device_timings.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "util/text.h"

namespace fp {
KernelTally device_timing_tally(std::string_view log, const DeviceTimings& t, const std::string& source) {
  KernelTally tally;
  tally.source = source + " (device op timings)";
  tally.device_timings = true;
  int devices = -1;
  size_t blocks = 0;
  bool in_block = false;
  std::map<std::string, KernelLine> ops;
  size_t line_no = 0;
  for (const std::string& raw : split_lines(log)) {
    ++line_no;
    // Timing lines are printed whole; the runtime's own records around them carry a prefix.
    const std::string line = trim(raw);
    RegexMatch m;
    if (devices < 0 && rule_search(t.devices, line, m)) devices = std::atoi(capture(t.devices, m, "count").c_str());
    if (rule_search(t.block, line, m)) {
      in_block = true;
      ++blocks;
      continue;
    }
    if (!in_block) continue;
    if (rule_search(t.end, line, m)) {
      in_block = false;
      continue;
    }
    // Another thread's record may land inside a block: skipped, the block goes on.
    if (!rule_search(t.op, line, m)) continue;
    const std::string name = capture(t.op, m, "name");
    const long long count = std::atoll(capture(t.op, m, "count").c_str());
    const double total_us = std::strtod(capture(t.op, m, "total_us").c_str(), nullptr);
    if (name.empty() || count <= 0 || !std::isfinite(total_us) || total_us < 0) continue;
    KernelLine& k = ops[name];
    if (k.name.empty()) {
      k.name = name;
      k.line = line_no;
    }
    k.launches += count;
    k.gpu_ns += std::llround(total_us * 1000.0);
  }
  const int device = devices == 1 ? 0 : -1;
  for (auto& [name, k] : ops) {
    k.device = device;
    tally.kernels.push_back(k);
  }
  if (blocks == 0) {
    tally.status = "failed";
    tally.reason = "no " + quote(t.block.examples.empty() ? t.block.pattern : t.block.examples.front()) +
                   " block in the log: this build does not print its device timings with " +
                   [&] {
                     std::string e;
                     for (const auto& [k, v] : t.env) e += (e.empty() ? "" : " ") + k + "=" + v;
                     return e;
                   }();
  } else {
    tally.status = "ok";
  }
  return tally;
}

bool timed_backend_expected(const std::vector<std::string>& expected_backends, const DeviceTimings& t) {
  for (const auto& b : expected_backends) {
    RegexMatch m;
    if (rule_search(t.backend, b, m)) return true;
  }
  return false;
}

}  // namespace fp
