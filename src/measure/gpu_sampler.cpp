#include "measure/gpu_sampler.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fp {

namespace {

constexpr size_t kMaxErrors = 8;

std::string bytes_as_mib(uint64_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

std::vector<std::string> GpuSamplerReport::slowdown_names() const {
  return clock_event_names(clock_event_bits & clock_event::kSlowdownMask);
}

std::string GpuSamplerReport::describe() const {
  std::ostringstream out;
  if (!measured) {
    out << "gpu: " << not_measured_reason << "\n";
    return out.str();
  }
  out << "gpu samples: " << samples << "\n";
  if (process_peaks.empty()) {
    out << "gpu memory per process: not measured: NVML listed none of the runtime's processes";
    if (!other_pids_seen.empty()) {
      out << " (it listed pids";
      for (pid_t p : other_pids_seen) out << " " << p;
      out << "; another pid namespace?)";
    }
    out << "\n";
  }
  for (const auto& p : process_peaks) {
    out << "gpu memory peak: pid " << p.pid << " gpu " << p.gpu << ": " << bytes_as_mib(p.peak_bytes) << "\n";
  }
  if (!process_peaks.empty()) out << "gpu memory peak, all processes: " << bytes_as_mib(peak_total_bytes) << "\n";
  out << "clock event reasons seen: " << describe_clock_events(clock_event_bits) << "\n";
  out << "samples with a power or thermal slowdown: " << slowdown_samples << " of " << samples << "\n";
  if (min_sm_clock_mhz) out << "lowest SM clock under load: " << *min_sm_clock_mhz << " MHz\n";
  out << "highest temperature: " << max_temperature_c << " C, highest power: " << max_power_mw / 1000 << " W\n";
  for (const auto& e : errors) out << "gpu sampling error: " << e << "\n";
  return out.str();
}

void GpuSampleAccumulator::add(const std::vector<GpuSample>& gpus, const std::set<pid_t>& watched) {
  r_.measured = true;
  ++r_.samples;
  uint64_t total = 0;
  bool slowdown = false;
  for (const auto& g : gpus) {
    bool watched_here = false;
    for (const auto& p : g.processes) {
      const auto pid = static_cast<pid_t>(p.pid);
      if (watched.count(pid) == 0) {
        other_pids_.insert(pid);
        continue;
      }
      watched_here = true;
      if (!p.used_bytes) continue;
      uint64_t& peak = peaks_[{pid, g.gpu}];
      peak = std::max(peak, *p.used_bytes);
      total += *p.used_bytes;
    }
    if (!g.reading) continue;
    const GpuReading& rd = *g.reading;
    r_.clock_event_bits |= rd.events.bits;
    slowdown = slowdown || rd.events.any_slowdown();
    r_.max_temperature_c = std::max(r_.max_temperature_c, rd.temperature_c);
    r_.max_power_mw = std::max(r_.max_power_mw, rd.power_mw);
    if (watched_here && (rd.events.bits & clock_event::kGpuIdle) == 0) {
      r_.min_sm_clock_mhz = std::min(r_.min_sm_clock_mhz.value_or(rd.sm_clock_mhz), rd.sm_clock_mhz);
    }
  }
  r_.peak_total_bytes = std::max(r_.peak_total_bytes, total);
  if (slowdown) ++r_.slowdown_samples;
}

void GpuSampleAccumulator::add_error(const std::string& message) {
  if (r_.errors.size() >= kMaxErrors) return;
  if (std::find(r_.errors.begin(), r_.errors.end(), message) != r_.errors.end()) return;
  r_.errors.push_back(message);
}

GpuSamplerReport GpuSampleAccumulator::report() const {
  GpuSamplerReport out = r_;
  if (!out.measured) {
    out.not_measured_reason = "not measured: no GPU sample was taken";
    if (!out.errors.empty()) out.not_measured_reason += " (" + out.errors.front() + ")";
  }
  for (const auto& [key, peak] : peaks_) out.process_peaks.push_back({key.first, key.second, peak});
  out.other_pids_seen.assign(other_pids_.begin(), other_pids_.end());
  return out;
}

std::optional<pid_t> process_group_from_stat(std::string_view stat_line) {
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the last ')'.
  const size_t close = stat_line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::istringstream in(std::string(stat_line.substr(close + 1)));
  std::string state;
  long ppid = 0, pgrp = 0;
  if (!(in >> state >> ppid >> pgrp)) return std::nullopt;
  return static_cast<pid_t>(pgrp);
}

std::vector<pid_t> pids_in_process_group(pid_t pgid) {
  std::vector<pid_t> out;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;  // the process ended meanwhile
    const auto group = process_group_from_stat(line);
    if (group && *group == pgid) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  std::sort(out.begin(), out.end());
  return out;
}

GpuSampler::GpuSampler(Result<Nvml> nvml, PidSource pids, GpuSamplerOptions options)
    : nvml_(std::move(nvml)), pids_(std::move(pids)), options_(std::move(options)) {}

GpuSampler::~GpuSampler() { stop(); }

void GpuSampler::start() {
  if (!nvml_ || thread_.joinable()) return;
  gpus_ = options_.gpus;
  if (gpus_.empty()) {
    const auto count = nvml_->gpu_count();
    if (!count) {
      acc_.add_error(count.error().message);
      return;
    }
    for (unsigned i = 0; i < *count; ++i) gpus_.push_back(i);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { run(); });
}

GpuSamplerReport GpuSampler::stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  if (!nvml_) {
    GpuSamplerReport r;
    r.not_measured_reason = nvml_.error().message;
    return r;
  }
  return acc_.report();
}

void GpuSampler::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    sample_once();
    lock.lock();
    cv_.wait_for(lock, options_.interval, [this] { return stop_; });
  }
  lock.unlock();
  sample_once();  // the last moment counts too (a peak just before the runtime is stopped)
}

void GpuSampler::sample_once() {
  const std::vector<pid_t> pid_list = pids_ ? pids_() : std::vector<pid_t>{};
  const std::set<pid_t> watched(pid_list.begin(), pid_list.end());
  std::vector<GpuSampleAccumulator::GpuSample> samples;
  bool any_data = false;  // a sample where every query failed is no sample
  for (unsigned gpu : gpus_) {
    GpuSampleAccumulator::GpuSample s;
    s.gpu = gpu;
    auto procs = nvml_->processes(gpu);
    if (procs) {
      s.processes = std::move(*procs);
      any_data = true;
    } else {
      acc_.add_error(procs.error().message);
    }
    auto reading = nvml_->reading(gpu);
    if (reading) {
      s.reading = *reading;
      any_data = true;
    } else {
      acc_.add_error(reading.error().message);
    }
    samples.push_back(std::move(s));
  }
  if (any_data) acc_.add(samples, watched);
}

}  // namespace fp
