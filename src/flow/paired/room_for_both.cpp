#include "flow/paired/room_for_both.h"

#include <algorithm>
#include <cstdio>

#include "measure/kv_headroom.h"

namespace fp {
namespace {

constexpr double kFootprintFactor = 1.5;  // the other arm's footprint, half again: its peak may come later
constexpr double kGpuMarginMiB = 1024;    // llama.cpp's --fit-target default, per device

std::string room_mib_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f MiB", v);
  return buf;
}

// Room beside `served` for `other`'s footprint; empty when there is, else why not.
std::string lacks(const TimedPass& served, const TimedPass& other, bool on_gpu, const std::string& served_name,
                  const std::string& other_name) {
  const FreeMemory& low = served.free_memory_low;
  if (!low.host_available_bytes || !other.peak_rss_bytes)
    return std::string("host memory not measured beside the ") + served_name + " launch";
  const double left = static_cast<double>(*low.host_available_bytes) / kBytesPerMiB;
  const double need = kFootprintFactor * static_cast<double>(*other.peak_rss_bytes) / kBytesPerMiB;
  if (left < need)
    return std::string("host: ") + room_mib_text(left) + " left beside the " + served_name + " launch, the " + other_name + " needs " +
           room_mib_text(need) + " (1.5 x its peak resident set)";
  if (!on_gpu) return "";
  if (!other.gpu_peak_mib || low.gpu_free_bytes.empty())
    return std::string("GPU memory not measured (") + (low.gpu_why_not.empty() ? other.gpu_memory : low.gpu_why_not) + ")";
  for (const auto& [gpu, free_bytes] : low.gpu_free_bytes) {
    const double free_mib = static_cast<double>(free_bytes) / kBytesPerMiB;
    const double need_gpu = kFootprintFactor * *other.gpu_peak_mib + kGpuMarginMiB;
    if (free_mib < need_gpu)
      return "GPU " + std::to_string(gpu) + ": " + room_mib_text(free_mib) + " free beside the " + served_name + " launch, the " +
             other_name + " needs " + room_mib_text(need_gpu) + " (1.5 x its peak GPU memory, plus --fit's 1 GiB margin)";
  }
  return "";
}

}  // namespace

RoomForBoth room_for_both(const TimedPass& a, const TimedPass& b, bool on_gpu, const std::string& a_name, const std::string& b_name) {
  on_gpu = on_gpu || a.gpu_peak_mib || b.gpu_peak_mib;
  std::string no = lacks(a, b, on_gpu, a_name, b_name);
  if (no.empty()) no = lacks(b, a, on_gpu, b_name, a_name);
  if (!no.empty()) return {false, no};
  const double host_left =
      static_cast<double>(std::min(*a.free_memory_low.host_available_bytes, *b.free_memory_low.host_available_bytes)) / kBytesPerMiB;
  const double host_peak = static_cast<double>(std::max(*a.peak_rss_bytes, *b.peak_rss_bytes)) / kBytesPerMiB;
  std::string why = "host: " + room_mib_text(host_left) + " left beside a launch of " + room_mib_text(host_peak) + " at most";
  if (on_gpu) why += "; every GPU holds both with --fit's 1 GiB margin";
  return {true, why};
}

}  // namespace fp
