// flashproof's CUPTI injection probe: counts the kernels a CUDA process ran on the GPU.
//
// Loaded by the CUDA driver when the runtime is started with CUDA_INJECTION64_PATH=<this .so>; the
// driver calls InitializeInjection() during cuInit. The probe lives inside the runtime's process, so
// it links to CUPTI and the C++ runtime only, never to anything of flashproof's.
//
// Environment:
//   FLASHPROOF_KERNEL_TALLY       file to write (required; unset = the probe stays idle and says so).
//                                 "%p" in it is replaced by the process id, for runtimes that start
//                                 several CUDA processes (one file each instead of one overwritten).
//   FLASHPROOF_PROBE_INTERVAL_MS  how often the tally is rewritten while the process runs
//                                 (default 500; 0 = only at exit).
//
// Tally file (rewritten whole, atomically: temporary file beside it, then rename):
//   # flashproof-probe v2 status=ok state=running|final pid=N cupti=V records=N incomplete=N dropped=N kernels=N
//   <launches>\t<total GPU ns>\t<device>\t<demangled kernel name>   one line per device and name, GPU time descending
// <device> is the CUDA device ordinal that ran the kernel (deviceId of the activity record, numbered
// as the process sees its devices: the N of ggml's CUDA<N>). v1 tallies had no device column.
// or, when CUPTI refuses this subscriber (nsys, ncu, torch.profiler or another probe got there first):
//   # flashproof-probe v2 status=refused state=final pid=N cupti=V reason=<call>: <CUPTI error name and text>
// or status=failed with the same fields for any other CUPTI error (no driver, CUPTI too old...).
// So the harness can tell five cases apart: no file (the probe was never loaded: no CUDA, wrong
// path), status=refused or status=failed (no evidence, and why), status=ok with no lines (CUDA
// initialised but no kernel ran: also no evidence), and status=ok with lines.
//
// When the file is written: every interval by a background thread (after a default CUPTI flush, which
// delivers every buffer whose records are complete), and at exit() by an atexit handler (after a
// forced flush). A runtime killed with SIGKILL therefore leaves a tally at most one interval old, with
// state=running. No SIGTERM handler is installed on purpose: a handler would replace the runtime's
// own (llama-server and vLLM shut down gracefully on SIGTERM and then exit(), which runs the atexit
// write), writing a file is not async-signal-safe, and a runtime that dies on SIGTERM's default
// action is covered by the interval writes like SIGKILL.
#include <cupti.h>
#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 2u << 20;  // one CUPTI activity buffer
constexpr size_t kBufferAlign = 8;

struct Tally {
  uint64_t launches = 0;
  uint64_t gpu_ns = 0;
};

struct Probe {
  std::string path;
  pid_t pid = 0;
  uint32_t cupti_version = 0;
  unsigned interval_ms = 500;

  std::mutex tally_mu;  // guards the fields below; taken by CUPTI's buffer thread and the writer
  std::map<std::pair<uint32_t, std::string>, Tally> by_mangled;  // (device, mangled name)
  uint64_t records = 0;
  uint64_t incomplete = 0;  // records without a usable start/end: counted as launches, 0 ns
  uint64_t dropped = 0;
  uint64_t generation = 0;  // bumped on every change, so an unchanged tally is not rewritten

  std::mutex write_mu;  // one writer at a time: the interval thread or the atexit handler
  uint64_t written_generation = UINT64_MAX;
  bool write_failed_reported = false;
  std::unordered_map<std::string, std::string> demangled;  // cache, used under write_mu

  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stop = false;
  std::thread writer;
};

// Leaked on purpose: the process may exit while CUPTI's thread still delivers a buffer, and no static
// destructor must run before the atexit handler has written the last tally.
Probe* g_probe = nullptr;

void report(const std::string& message) { std::fprintf(stderr, "flashproof-probe: %s\n", message.c_str()); }

std::string cupti_error_text(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI error";
  return std::string(text) + " (CUptiResult " + std::to_string(static_cast<int>(result)) + ")";
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return mangled;  // C names (and cuBLAS's) are not mangled
  std::string result(out);
  std::free(out);
  return result;
}

// The demangled name must stay one field on one line.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::string expand_pid(std::string path, pid_t pid) {
  const std::string token = "%p";
  for (size_t at = path.find(token); at != std::string::npos; at = path.find(token, at)) {
    const std::string id = std::to_string(pid);
    path.replace(at, token.size(), id);
    at += id.size();
  }
  return path;
}

bool write_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return false;
  const bool wrote = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

std::string header(const Probe& p, const char* status, bool final_write) {
  return std::string("# flashproof-probe v2 status=") + status + " state=" + (final_write ? "final" : "running") +
         " pid=" + std::to_string(p.pid) + " cupti=" + std::to_string(p.cupti_version);
}

void write_or_report(Probe& p, const std::string& content) {
  if (write_atomically(p.path, content)) return;
  if (!p.write_failed_reported) {
    report("cannot write the kernel tally to " + p.path + ": " + std::strerror(errno));
    p.write_failed_reported = true;
  }
}

// status "refused": another CUPTI subscriber holds the process; "failed": any other CUPTI error.
void write_refusal(Probe& p, const char* status, const std::string& reason) {
  report(std::string("CUPTI ") + (std::strcmp(status, "refused") == 0 ? "refused" : "failed for") +
         " the probe, no kernel evidence from this process: " + reason);
  std::lock_guard<std::mutex> lock(p.write_mu);
  write_or_report(p, header(p, status, true) + " reason=" + one_line(reason) + "\n");
}

void write_tally(Probe& p, bool final_write) {
  std::lock_guard<std::mutex> write_lock(p.write_mu);
  std::map<std::pair<uint32_t, std::string>, Tally> snapshot;
  uint64_t records = 0, incomplete = 0, dropped = 0, generation = 0;
  {
    std::lock_guard<std::mutex> lock(p.tally_mu);
    generation = p.generation;
    if (!final_write && generation == p.written_generation) return;
    snapshot = p.by_mangled;
    records = p.records;
    incomplete = p.incomplete;
    dropped = p.dropped;
  }
  // Different mangled names can demangle alike (templates differing only in linkage): merge them.
  std::map<std::pair<uint32_t, std::string>, Tally> by_name;
  for (const auto& [key, tally] : snapshot) {
    const std::string& mangled = key.second;
    auto cached = p.demangled.find(mangled);
    if (cached == p.demangled.end()) cached = p.demangled.emplace(mangled, one_line(demangle(mangled))).first;
    Tally& t = by_name[{key.first, cached->second}];
    t.launches += tally.launches;
    t.gpu_ns += tally.gpu_ns;
  }
  std::vector<std::pair<std::pair<uint32_t, std::string>, Tally>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.second.gpu_ns != b.second.gpu_ns) return a.second.gpu_ns > b.second.gpu_ns;
    return a.first < b.first;
  });
  std::string out = header(p, "ok", final_write) + " records=" + std::to_string(records) +
                    " incomplete=" + std::to_string(incomplete) + " dropped=" + std::to_string(dropped) +
                    " kernels=" + std::to_string(rows.size()) + "\n";
  for (const auto& [key, tally] : rows) {
    out += std::to_string(tally.launches) + "\t" + std::to_string(tally.gpu_ns) + "\t" + std::to_string(key.first) + "\t" +
           key.second + "\n";
  }
  write_or_report(p, out);
  p.written_generation = generation;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                               size_t valid_size) {
  // Aggregate the buffer locally (names point into the buffer), then merge under the lock once.
  std::map<std::pair<uint32_t, std::string_view>, Tally> local;  // (device, mangled name)
  uint64_t records = 0, incomplete = 0;
  CUpti_Activity* record = nullptr;
  while (valid_size > 0 && cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    Tally& t = local[{kernel->deviceId, kernel->name != nullptr ? std::string_view(kernel->name) : std::string_view("<unnamed>")}];
    t.launches += 1;
    ++records;
    if (kernel->start != 0 && kernel->end > kernel->start) {
      t.gpu_ns += kernel->end - kernel->start;
    } else {
      ++incomplete;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
  if (g_probe != nullptr && (records > 0 || dropped > 0)) {
    std::lock_guard<std::mutex> lock(g_probe->tally_mu);
    for (const auto& [key, tally] : local) {
      Tally& t = g_probe->by_mangled[{key.first, std::string(key.second)}];
      t.launches += tally.launches;
      t.gpu_ns += tally.gpu_ns;
    }
    g_probe->records += records;
    g_probe->incomplete += incomplete;
    g_probe->dropped += dropped;
    ++g_probe->generation;
  }
  std::free(buffer);
}

void writer_loop(Probe* p) {
  std::unique_lock<std::mutex> lock(p->stop_mu);
  while (!p->stop) {
    p->stop_cv.wait_for(lock, std::chrono::milliseconds(p->interval_ms), [p] { return p->stop; });
    if (p->stop) break;
    lock.unlock();
    cuptiActivityFlushAll(0);  // buffers whose records are all complete; safe at any time
    write_tally(*p, false);
    lock.lock();
  }
}

void at_exit() {
  Probe* p = g_probe;
  if (p == nullptr || getpid() != p->pid) return;  // a forked child inherits this handler: not its tally
  {
    std::lock_guard<std::mutex> lock(p->stop_mu);
    p->stop = true;
  }
  p->stop_cv.notify_all();
  if (p->writer.joinable()) p->writer.join();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  write_tally(*p, true);
}

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

unsigned interval_from_env() {
  const char* text = std::getenv("FLASHPROOF_PROBE_INTERVAL_MS");
  if (text == nullptr || *text == '\0') return 500;
  char* end = nullptr;
  const unsigned long value = std::strtoul(text, &end, 10);
  if (end == text || *end != '\0' || value > 3600000) {
    report(std::string("FLASHPROOF_PROBE_INTERVAL_MS=") + text + " is not a number of milliseconds in 0..3600000; using 500");
    return 500;
  }
  return static_cast<unsigned>(value);
}

struct StartFailure {
  CUptiResult result = CUPTI_SUCCESS;
  std::string reason;  // "<call>: <error>"
};

StartFailure failure(const char* call, CUptiResult r) { return {r, std::string(call) + ": " + cupti_error_text(r)}; }

StartFailure start_cupti() {
  // One CUPTI subscriber per process: claiming it first makes a refusal explicit (nsys, ncu and
  // torch.profiler hold it), instead of an activity stream that silently stays empty.
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult r = cuptiSubscribe(&subscriber, ignore_callback, nullptr);
  if (r != CUPTI_SUCCESS) return failure("cuptiSubscribe", r);
  r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) return failure("cuptiActivityRegisterCallbacks", r);
  r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) return failure("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
  return {};
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> initialised{false};
  if (initialised.exchange(true)) return 1;

  const char* path = std::getenv("FLASHPROOF_KERNEL_TALLY");
  if (path == nullptr || *path == '\0') {
    report("FLASHPROOF_KERNEL_TALLY is not set; the probe stays idle (no kernel tally is written)");
    return 1;
  }
  auto* p = new Probe();
  p->pid = getpid();
  p->path = expand_pid(path, p->pid);
  p->interval_ms = interval_from_env();
  if (cuptiGetVersion(&p->cupti_version) != CUPTI_SUCCESS) p->cupti_version = 0;

  g_probe = p;  // before CUPTI can deliver a buffer
  const StartFailure failed = start_cupti();
  if (failed.result != CUPTI_SUCCESS) {
    g_probe = nullptr;
    write_refusal(*p, failed.result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "refused" : "failed",
                  failed.reason);
    return 1;  // let the runtime run on, unprofiled; the file says why there is no evidence
  }
  // A first (empty) tally right away: from here on the file proves the probe was loaded.
  write_tally(*p, false);
  cuptiActivityFlushPeriod(p->interval_ms > 0 ? p->interval_ms : 500);
  if (p->interval_ms > 0) p->writer = std::thread(writer_loop, p);
  std::atexit(at_exit);
  return 1;
}
