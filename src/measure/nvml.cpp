#include "measure/nvml.h"

#include <dlfcn.h>

#include <cstdio>
#include <utility>

namespace fp {

namespace {

// The few NVML types used, declared here (no nvml.h on the build machines). The API is stable:
// these match nvml.h from CUDA 11.8 through 13.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr int NVML_CLOCK_SM = 1;
constexpr int NVML_CLOCK_MEM = 2;
constexpr int NVML_TEMPERATURE_GPU = 0;
constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

constexpr const char* kLibrary = "libnvidia-ml.so.1";

}  // namespace

// Outside the anonymous namespace: Nvml::Api names them, and a member type of an anonymous
// namespace draws -Wsubobject-linkage where a unity batch includes this source.
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlProcessInfo_t as taken by nvmlDeviceGetComputeRunningProcesses_v3 (same layout as _v2).
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct Nvml::Api {
  void* handle = nullptr;
  std::string library;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*device_count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*device_name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*device_uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*cuda_driver_version)(int*) = nullptr;
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*clock_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  const char* clock_event_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;

  Api() = default;
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;
  // NVML is shut down with the last Nvml copy; the library stays mapped (dlclose of a driver library
  // at run time buys nothing and has broken processes before).
  ~Api() {
    if (shutdown != nullptr) shutdown();
  }

  std::string text(nvmlReturn_t r) const {
    const char* s = error_string != nullptr ? error_string(r) : nullptr;
    return (s != nullptr ? std::string(s) : std::string("NVML error")) + " (nvmlReturn_t " + std::to_string(r) + ")";
  }
  Error failed(const char* call, nvmlReturn_t r, const std::string& on = "") const {
    return Error{"not measured: " + std::string(call) + (on.empty() ? "" : "(" + on + ")") + " failed: " + text(r)};
  }
  Error missing(const char* call) const {
    return Error{"not measured: " + library + " has no " + call + " (driver too old for this query)"};
  }
};

namespace {

template <typename Fn>
void resolve(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
}

std::string gpu_label(unsigned gpu) { return "gpu " + std::to_string(gpu); }

}  // namespace

std::string DriverInfo::cuda_version_text() const {
  if (cuda_version <= 0) return "unknown";
  return std::to_string(cuda_version / 1000) + "." + std::to_string((cuda_version % 1000) / 10);
}

std::vector<std::string> clock_event_names(uint64_t bits) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {clock_event::kGpuIdle, "GPU idle"},
      {clock_event::kApplicationsClocksSetting, "applications clocks setting"},
      {clock_event::kSwPowerCap, "SW power cap"},
      {clock_event::kHwSlowdown, "HW slowdown"},
      {clock_event::kSyncBoost, "sync boost"},
      {clock_event::kSwThermalSlowdown, "SW thermal slowdown"},
      {clock_event::kHwThermalSlowdown, "HW thermal slowdown"},
      {clock_event::kHwPowerBrakeSlowdown, "HW power brake slowdown"},
      {clock_event::kDisplayClockSetting, "display clock setting"},
  };
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if ((bits & bit) != 0) names.emplace_back(name);
  }
  for (uint64_t bit = 1; bit != 0; bit <<= 1) {
    if ((bits & bit) != 0 && (known & bit) == 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "bit 0x%llx", static_cast<unsigned long long>(bit));
      names.emplace_back(buf);
    }
  }
  return names;
}

std::string describe_clock_events(uint64_t bits) {
  const auto names = clock_event_names(bits);
  if (names.empty()) return "none";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Result<Nvml> Nvml::open() { return open_library(kLibrary); }

Result<Nvml> Nvml::open_library(const std::string& soname) {
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Error{"not measured: " + soname + " not found (no NVIDIA driver): " + std::string(dlerror())};
  }
  auto api = std::make_shared<Api>();
  api->handle = handle;
  api->library = soname;
  decltype(api->init) init = nullptr;
  resolve(handle, "nvmlInit_v2", init);
  resolve(handle, "nvmlErrorString", api->error_string);
  resolve(handle, "nvmlDeviceGetCount_v2", api->device_count);
  resolve(handle, "nvmlDeviceGetHandleByIndex_v2", api->handle_by_index);
  decltype(api->shutdown) shutdown = nullptr;
  resolve(handle, "nvmlShutdown", shutdown);
  for (const auto& [fn, name] : {std::pair<bool, const char*>{init != nullptr, "nvmlInit_v2"},
                                 {shutdown != nullptr, "nvmlShutdown"},
                                 {api->device_count != nullptr, "nvmlDeviceGetCount_v2"},
                                 {api->handle_by_index != nullptr, "nvmlDeviceGetHandleByIndex_v2"}}) {
    if (!fn) return api->missing(name);
  }
  resolve(handle, "nvmlDeviceGetName", api->device_name);
  resolve(handle, "nvmlDeviceGetUUID", api->device_uuid);
  resolve(handle, "nvmlSystemGetDriverVersion", api->driver_version);
  resolve(handle, "nvmlSystemGetCudaDriverVersion_v2", api->cuda_driver_version);
  resolve(handle, "nvmlDeviceGetMemoryInfo", api->memory_info);
  resolve(handle, "nvmlDeviceGetComputeRunningProcesses_v3", api->compute_processes);
  resolve(handle, "nvmlDeviceGetCurrentClocksEventReasons", api->clock_event_reasons);
  if (api->clock_event_reasons == nullptr) {  // drivers before 535 name it ...ThrottleReasons
    api->clock_event_reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
    resolve(handle, api->clock_event_reasons_name, api->clock_event_reasons);
  }
  resolve(handle, "nvmlDeviceGetClockInfo", api->clock_info);
  resolve(handle, "nvmlDeviceGetTemperature", api->temperature);
  resolve(handle, "nvmlDeviceGetPowerUsage", api->power_usage);

  const nvmlReturn_t r = init();
  if (r != NVML_SUCCESS) return api->failed("nvmlInit_v2", r);
  api->shutdown = shutdown;  // only an initialised NVML is shut down
  return Nvml(std::move(api));
}

Result<unsigned> Nvml::gpu_count() const {
  unsigned count = 0;
  const nvmlReturn_t r = api_->device_count(&count);
  if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetCount_v2", r);
  return count;
}

Result<void*> Nvml::device(unsigned gpu) const {
  nvmlDevice_t dev = nullptr;
  const nvmlReturn_t r = api_->handle_by_index(gpu, &dev);
  if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetHandleByIndex_v2", r, gpu_label(gpu));
  return dev;
}

Result<std::vector<GpuInfo>> Nvml::gpus() const {
  if (api_->device_name == nullptr) return api_->missing("nvmlDeviceGetName");
  if (api_->device_uuid == nullptr) return api_->missing("nvmlDeviceGetUUID");
  if (api_->memory_info == nullptr) return api_->missing("nvmlDeviceGetMemoryInfo");
  FP_TRY(const unsigned count, gpu_count());
  std::vector<GpuInfo> out;
  for (unsigned i = 0; i < count; ++i) {
    FP_TRY(void* dev, device(i));
    GpuInfo info;
    info.index = i;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    nvmlReturn_t r = api_->device_name(dev, name, sizeof name);
    if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetName", r, gpu_label(i));
    info.name = name;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    r = api_->device_uuid(dev, uuid, sizeof uuid);
    if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetUUID", r, gpu_label(i));
    info.uuid = uuid;
    nvmlMemory_t mem{};
    r = api_->memory_info(dev, &mem);
    if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetMemoryInfo", r, gpu_label(i));
    info.memory_total_bytes = mem.total;
    info.memory_used_bytes = mem.used;
    info.memory_free_bytes = mem.free;
    out.push_back(std::move(info));
  }
  return out;
}

Result<DriverInfo> Nvml::driver() const {
  if (api_->driver_version == nullptr) return api_->missing("nvmlSystemGetDriverVersion");
  if (api_->cuda_driver_version == nullptr) return api_->missing("nvmlSystemGetCudaDriverVersion_v2");
  DriverInfo info;
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  nvmlReturn_t r = api_->driver_version(version, sizeof version);
  if (r != NVML_SUCCESS) return api_->failed("nvmlSystemGetDriverVersion", r);
  info.driver_version = version;
  r = api_->cuda_driver_version(&info.cuda_version);
  if (r != NVML_SUCCESS) return api_->failed("nvmlSystemGetCudaDriverVersion_v2", r);
  return info;
}

Result<std::vector<GpuProcess>> Nvml::processes(unsigned gpu) const {
  if (api_->compute_processes == nullptr) return api_->missing("nvmlDeviceGetComputeRunningProcesses_v3");
  FP_TRY(void* dev, device(gpu));
  // The list can grow between the sizing call and the reading call: retry a few times.
  std::vector<nvmlProcessInfo_t> infos(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    const nvmlReturn_t r = api_->compute_processes(dev, &count, infos.data());
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
      infos.resize(static_cast<size_t>(count) + 16);
      continue;
    }
    if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetComputeRunningProcesses_v3", r, gpu_label(gpu));
    std::vector<GpuProcess> out;
    for (unsigned i = 0; i < count && i < infos.size(); ++i) {
      GpuProcess p;
      p.pid = infos[i].pid;
      if (infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) p.used_bytes = infos[i].usedGpuMemory;
      out.push_back(p);
    }
    return out;
  }
  return Error{"not measured: nvmlDeviceGetComputeRunningProcesses_v3(" + gpu_label(gpu) +
               ") kept answering 'insufficient size' (processes starting and stopping)"};
}

Result<uint64_t> Nvml::process_memory_bytes(unsigned gpu, pid_t pid) const {
  FP_TRY(const auto procs, processes(gpu));
  std::string seen;
  for (const auto& p : procs) {
    if (static_cast<pid_t>(p.pid) == pid) {
      if (!p.used_bytes) {
        return Error{"not measured: NVML lists pid " + std::to_string(pid) + " on " + gpu_label(gpu) +
                     " but cannot say how much memory it uses (NVML_VALUE_NOT_AVAILABLE)"};
      }
      return *p.used_bytes;
    }
    seen += (seen.empty() ? "" : ", ") + std::to_string(p.pid);
  }
  return Error{"not measured: pid " + std::to_string(pid) + " holds no CUDA context on " + gpu_label(gpu) +
               " (NVML lists: " + (seen.empty() ? "no process" : seen) +
               "; in a container NVML reports the host's pids)"};
}

Result<ClockEvents> Nvml::clock_events(unsigned gpu) const {
  if (api_->clock_event_reasons == nullptr) return api_->missing("nvmlDeviceGetCurrentClocksEventReasons");
  FP_TRY(void* dev, device(gpu));
  unsigned long long bits = 0;
  const nvmlReturn_t r = api_->clock_event_reasons(dev, &bits);
  if (r != NVML_SUCCESS) return api_->failed(api_->clock_event_reasons_name, r, gpu_label(gpu));
  return ClockEvents{bits};
}

Result<GpuReading> Nvml::reading(unsigned gpu) const {
  if (api_->clock_info == nullptr) return api_->missing("nvmlDeviceGetClockInfo");
  if (api_->temperature == nullptr) return api_->missing("nvmlDeviceGetTemperature");
  if (api_->power_usage == nullptr) return api_->missing("nvmlDeviceGetPowerUsage");
  FP_TRY(void* dev, device(gpu));
  GpuReading out;
  nvmlReturn_t r = api_->clock_info(dev, NVML_CLOCK_SM, &out.sm_clock_mhz);
  if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetClockInfo", r, gpu_label(gpu) + ", SM");
  r = api_->clock_info(dev, NVML_CLOCK_MEM, &out.memory_clock_mhz);
  if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetClockInfo", r, gpu_label(gpu) + ", memory");
  r = api_->temperature(dev, NVML_TEMPERATURE_GPU, &out.temperature_c);
  if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetTemperature", r, gpu_label(gpu));
  r = api_->power_usage(dev, &out.power_mw);
  if (r != NVML_SUCCESS) return api_->failed("nvmlDeviceGetPowerUsage", r, gpu_label(gpu));
  FP_TRY(out.events, clock_events(gpu));
  return out;
}

std::string ctest_resource_spec_json(const std::vector<GpuInfo>& gpus) {
  std::string out = "{\n  \"version\": {\"major\": 1, \"minor\": 0},\n  \"local\": [\n    {\n      \"gpus\": [";
  for (size_t i = 0; i < gpus.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    out += "        {\"id\": \"" + std::to_string(gpus[i].index) + "\", \"slots\": 1}";
  }
  out += gpus.empty() ? "]\n" : "\n      ]\n";
  out += "    }\n  ]\n}\n";
  return out;
}

std::string nvml_reason(const Error& e) {
  const std::string prefix = "not measured: ";
  return e.message.rfind(prefix, 0) == 0 ? e.message.substr(prefix.size()) : e.message;
}

}  // namespace fp
