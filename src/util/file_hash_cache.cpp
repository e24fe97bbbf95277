#include "util/file_hash_cache.h"

#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/sha256.h"
#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kCacheVersion = 1;
constexpr uint64_t kNoteFromBytes = 1ull << 30;  // say so before reading a file this large
// A file modified this recently is not cached: a rewrite within the file system's timestamp
// granularity could keep size, mtime and inode (git's "racy" index entries, the same cure).
constexpr uint64_t kRacyNs = 2'000'000'000ull;

uint64_t now_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Key {
  uint64_t size = 0, mtime_ns = 0, inode = 0, device = 0;
  bool operator==(const Key& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode && device == o.device;
  }
};

Result<Key> key_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return make_error(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return make_error(path + ": not a regular file");
  Key k;
  k.size = static_cast<uint64_t>(st.st_size);
  k.mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + static_cast<uint64_t>(st.st_mtim.tv_nsec);
  k.inode = static_cast<uint64_t>(st.st_ino);
  k.device = static_cast<uint64_t>(st.st_dev);
  return k;
}

json entry_json(const Key& k, const std::string& sha) {
  return {{"size", k.size}, {"mtime_ns", k.mtime_ns}, {"inode", k.inode}, {"device", k.device}, {"sha256", sha}};
}

// The entry's key and hash, or nothing when it is not one we wrote (ignored, never trusted).
bool entry_of(const json& e, Key& k, std::string& sha) {
  if (!e.is_object()) return false;
  for (const char* f : {"size", "mtime_ns", "inode", "device"})
    if (!e.contains(f) || !e[f].is_number_unsigned()) return false;
  if (!e.contains("sha256") || !e["sha256"].is_string()) return false;
  k = {e["size"].get<uint64_t>(), e["mtime_ns"].get<uint64_t>(), e["inode"].get<uint64_t>(), e["device"].get<uint64_t>()};
  sha = e["sha256"].get<std::string>();
  return sha.size() == 64;
}

// The cache's "files" object; empty when the file is missing, and (with a warning) when unreadable.
json load_files(const std::string& cache_file, std::ostream& notes) {
  std::error_code ec;
  if (!fs::exists(cache_file, ec)) return json::object();
  auto text = read_file(cache_file);
  auto warn = [&](const std::string& why) {
    notes << "flashproof: warning: hash cache " << cache_file << " ignored (" << why
          << "); hashes are computed again and the cache rewritten\n";
    return json::object();
  };
  if (!text) return warn(text.error().message);
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return warn("not valid JSON");
  if (!j.is_object() || !j.contains("version") || j["version"] != kCacheVersion || !j.contains("files") || !j["files"].is_object())
    return warn("expected {\"version\": " + std::to_string(kCacheVersion) + ", \"files\": {...}}");
  return j["files"];
}

// Adds one entry to what the cache holds now (another process may have written since we read it),
// drops entries whose file is gone or changed, and writes it atomically.
void store(const std::string& cache_file, const std::string& canonical, const Key& k, const std::string& sha,
           std::ostream& notes) {
  std::ostringstream ignored;  // load_files warned once already
  json files = load_files(cache_file, ignored);
  files[canonical] = entry_json(k, sha);
  json kept = json::object();
  for (const auto& [path, e] : files.items()) {
    Key ek;
    std::string esha;
    auto now = key_of(path);
    if (entry_of(e, ek, esha) && now && *now == ek) kept[path] = e;
  }
  std::error_code ec;
  fs::create_directories(fs::path(cache_file).parent_path(), ec);
  json out = {{"version", kCacheVersion}, {"files", kept}};
  if (auto w = write_file_atomic(cache_file, out.dump(1) + "\n"); !w)
    notes << "flashproof: warning: hash cache not written: " << w.error().message << "\n";
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
  return buf;
}

}  // namespace

std::string default_hash_cache_file() {
  if (const char* f = std::getenv("FLASHPROOF_HASH_CACHE"); f && *f) return f;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/flashproof/sha256.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/flashproof/sha256.json";
  return "";
}

Result<FileHash> cached_sha256_file(const std::string& path, const std::string& cache_file, bool rehash,
                                    std::ostream& notes) {
  FileHash out;
  out.path = path;
  FP_TRY(Key before, key_of(path));
  out.size = before.size;
  std::error_code ec;
  const std::string canonical = fs::canonical(path, ec).string();
  if (ec) return make_error(path + ": " + ec.message());
  if (!rehash && !cache_file.empty()) {
    json files = load_files(cache_file, notes);
    Key k;
    if (files.contains(canonical) && entry_of(files[canonical], k, out.sha256) && k == before) {
      out.from_cache = true;
      return out;
    }
  }
  if (before.size >= kNoteFromBytes)
    notes << "flashproof: hashing " << path << " (" << human_bytes(before.size) << ")"
          << (cache_file.empty() ? "" : "; later runs take it from " + cache_file) << "\n";
  FP_TRY(out.sha256, sha256_file(path));
  auto after = key_of(path);
  if (!after || !(*after == before))
    return make_error(path + ": the file changed while it was being hashed (size, modification time or inode): "
                             "wait until it is written completely");
  if (!cache_file.empty() && before.mtime_ns + kRacyNs < now_ns()) store(cache_file, canonical, before, out.sha256, notes);
  return out;
}

Result<FileHash> cached_sha256_file(const std::string& path, bool rehash) {
  return cached_sha256_file(path, default_hash_cache_file(), rehash, std::cerr);
}

}  // namespace fp
