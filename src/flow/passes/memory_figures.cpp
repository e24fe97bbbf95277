#include "flow/passes/memory_figures.h"

#include <algorithm>
#include <cctype>

namespace fp {
namespace {

// A device name as part of a figure name (letters, digits, '_', '.', '-'; anything else '_').
std::string device_part(const std::string& device) {
  std::string s = device;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) c = '_';
  return s;
}

}  // namespace

LaunchMemory launch_memory(const TimedPass& pass, const LogScan& scan) {
  LaunchMemory m;
  m.kv_mib_by_device = scan.kv_mib_by_device();
  m.compute_mib_by_device = scan.compute_mib_by_device();
  if (auto kv = scan.kv_total()) m.kv_total_mib = kv->mib;
  if (pass.peak_rss_bytes) m.host_peak_rss_mib = static_cast<double>(*pass.peak_rss_bytes) / (1024.0 * 1024.0);
  m.gpu_peak_mib = pass.gpu_peak_mib;
  return m;
}

std::vector<FigureResult> memory_figures(const std::vector<LaunchMemory>& launches) {
  std::map<std::string, std::vector<double>> values;
  std::vector<std::string> order;
  auto put = [&](const std::string& name, double v) {
    if (!values.count(name)) order.push_back(name);
    values[name].push_back(v);
  };
  for (const LaunchMemory& m : launches) {
    if (m.kv_total_mib) put("memory.kv_cache_mib", *m.kv_total_mib);
    for (const auto& [device, mib] : m.kv_mib_by_device) put("memory.kv_cache_mib." + device_part(device), mib);
    for (const auto& [device, mib] : m.compute_mib_by_device) put("memory.compute_mib." + device_part(device), mib);
    if (m.host_peak_rss_mib) put("memory.host_peak_rss_mib", *m.host_peak_rss_mib);
    if (m.gpu_peak_mib) put("memory.gpu_peak_mib", *m.gpu_peak_mib);
  }
  std::sort(order.begin(), order.end());
  std::vector<FigureResult> out;
  for (const auto& name : order) {
    FigureResult f;
    f.name = name;
    f.samples = values[name];
    f.launch_medians = values[name];
    f.summary = summarize(f.samples);
    f.gate = true;
    f.lower_is_better = true;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fp
