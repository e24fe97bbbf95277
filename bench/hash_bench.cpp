// hash_bench: what identifying a model file by its sha256 costs per run, on a multi-gigabyte file.
// Makes FILE (default /var/tmp/flashproof-hash-bench-<pid>.bin, GIB gibibytes of pseudo-random
// bytes; removed at the end) unless an existing file is named, then times:
//  - OpenSSL's SHA-256 as the harness reads the file (util/sha256.h sha256_file), the hand-written
//    SHA-256 flashproof used before (bench/handwritten_sha256.cpp), and coreutils' sha256sum: each
//    from disk (the file dropped from the page cache first: the first hash of a model) and from the
//    page cache (the hash's own cost);
//  - the per-run cost in the harness (util/file_hash_cache.h with a scratch cache): the first run
//    (no cache entry: one read) and later runs (the cache answers);
//  - whether the harness's hash left the file in the page cache (it should not).
// usage: hash_bench [--gib N] [--keep] [FILE]
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "handwritten_sha256.h"
#include "util/file_hash_cache.h"
#include "util/page_cache.h"
#include "util/sha256.h"

namespace {

namespace fs = std::filesystem;

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool drop_from_page_cache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  const bool gone = fp::resident_pages(fd) == 0;
  ::close(fd);
  return gone;
}

double resident_share(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDONLY);
  const int64_t pages = fd < 0 ? -1 : fp::resident_pages(fd);
  if (fd >= 0) ::close(fd);
  const double total = static_cast<double>((size + 4095) / 4096);
  return pages < 0 ? -1 : static_cast<double>(pages) / total;
}

void warm(const std::string& path) {
  std::vector<char> buf(8 << 20);
  int fd = ::open(path.c_str(), O_RDONLY);
  while (::read(fd, buf.data(), buf.size()) > 0) {
  }
  ::close(fd);
}

bool make_file(const std::string& path, uint64_t bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  std::vector<uint64_t> buf((64 << 20) / 8);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t done = 0; done < bytes;) {
    for (auto& w : buf) {  // xorshift64: incompressible, fast to make
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w = x;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(bytes - done, buf.size() * 8));
    if (::write(fd, buf.data(), n) != static_cast<ssize_t>(n)) {
      ::close(fd);
      return false;
    }
    done += n;
  }
  ::fsync(fd);
  ::close(fd);
  return true;
}

std::string sha256sum(const std::string& path) {
  const std::string cmd = "sha256sum '" + path + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "";
  char out[128] = {};
  const bool got = std::fgets(out, sizeof out, p) != nullptr;
  ::pclose(p);
  return got ? std::string(out, 64) : "";
}

}  // namespace

int main(int argc, char** argv) {
  double gib = 4;
  bool keep = false;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gib" && i + 1 < argc) gib = std::atof(argv[++i]);
    else if (a == "--keep") keep = true;
    else if (a == "-h" || a == "--help") {
      std::printf("usage: hash_bench [--gib N] [--keep] [FILE]\n");
      return 0;
    } else path = a;
  }
  const bool made = path.empty() || !fs::exists(path);
  if (path.empty()) path = "/var/tmp/flashproof-hash-bench-" + std::to_string(::getpid()) + ".bin";
  const std::string cache = path + ".sha256-cache.json";
  if (made) {
    std::printf("making %s: %.1f GiB of pseudo-random bytes\n", path.c_str(), gib);
    if (!make_file(path, static_cast<uint64_t>(gib * (1ull << 30)))) {
      std::fprintf(stderr, "hash_bench: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
      fs::remove(path);
      return 2;
    }
  }
  const uint64_t size = fs::file_size(path);
  const double gb = static_cast<double>(size) / 1e9;
  // An old modification time, so that the hash cache keeps the entry (it skips files written in the
  // last seconds).
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(1));
  std::printf("file: %s, %.2f GB; load average now: ", path.c_str(), gb);
  std::fflush(stdout);
  std::system("cut -d' ' -f1-3 /proc/loadavg");

  std::string expect;
  struct Impl {
    const char* name;
    std::function<std::string()> hash;
  };
  const std::vector<Impl> impls = {
      {"OpenSSL (util/sha256.h)", [&] { return *fp::sha256_file(path); }},
      {"hand-written (before)", [&] { return fp::bench::handwritten_sha256_file(path); }},
      {"coreutils sha256sum", [&] { return sha256sum(path); }},
  };
  std::printf("\n%-26s %12s %10s %12s %10s\n", "implementation", "from disk s", "GB/s", "page cache s", "GB/s");
  for (const auto& impl : impls) {
    std::string h1, h2;
    if (!drop_from_page_cache(path)) std::printf("(the file stayed in the page cache: 'from disk' is not)\n");
    const double cold = seconds_of([&] { h1 = impl.hash(); });
    warm(path);
    const double hot = seconds_of([&] { h2 = impl.hash(); });
    if (expect.empty()) expect = h1;
    std::printf("%-26s %12.2f %10.2f %12.2f %10.2f%s\n", impl.name, cold, gb / cold, hot, gb / hot,
                h1 == expect && h2 == expect ? "" : "  WRONG HASH");
  }

  // The harness's per-run cost: util/file_hash_cache.h with a scratch cache, the file out of the cache.
  fs::remove(cache);
  drop_from_page_cache(path);
  std::ostringstream notes;
  bool first_from_cache = true;
  const double first = seconds_of([&] { first_from_cache = fp::cached_sha256_file(path, cache, false, notes)->from_cache; });
  const double left = resident_share(path, size);
  std::vector<double> later;
  bool all_cached = true;
  for (int i = 0; i < 20; ++i)
    later.push_back(seconds_of([&] { all_cached = all_cached && fp::cached_sha256_file(path, cache, false, notes)->from_cache; }));
  std::sort(later.begin(), later.end());
  std::printf("\nper run in the harness (model hash, util/file_hash_cache.h):\n");
  std::printf("  first run (no cache entry: reads the file):  %8.2f s%s\n", first, first_from_cache ? "  (UNEXPECTED: cached)" : "");
  std::printf("  later runs (cache hit), median of %zu:        %8.3f ms (max %.3f ms)%s\n", later.size(), later[later.size() / 2] * 1e3,
              later.back() * 1e3, all_cached ? "" : "  (UNEXPECTED: not all cached)");
  std::printf("  file left in the page cache after the first run's hash: %.1f%% of its pages (started at 0%%)\n", 100 * left);
  std::printf("  before (hand-written, every run, twice per case in `gate`): see the table's hand-written row\n");

  fs::remove(cache);
  if (made && !keep) fs::remove(path);
  return 0;
}
