// Test support (header only, for *_test.cpp): scratch files for the tests that need real files: a
// folder removed at the end, files of given bytes, an old modification time, and whether the page
// cache can be observed there.
#pragma once

#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace fp::testing {

namespace fs = std::filesystem;

class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // Under /var/tmp: /tmp may be a tmpfs, whose pages the page cache cannot drop.
    const fs::path base = fs::exists("/var/tmp") ? fs::path("/var/tmp") : fs::temp_directory_path();
    dir_ = base / ("fp-util-test-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ScratchDir() { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

inline std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(gen());
  return s;
}

// Writes the bytes, flushed to disk (clean pages can leave the page cache), with an mtime an hour ago
// plus `age_offset_s` (the hash cache does not keep entries of files modified in the last seconds).
inline void write_file(const std::string& path, const std::string& bytes, int age_offset_s = 0) {
  std::ofstream(path, std::ios::binary) << bytes;
  int fd = ::open(path.c_str(), O_RDONLY);
  ::fsync(fd);
  ::close(fd);
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(1) + std::chrono::seconds(age_offset_s));
}

// Whether the page cache of files in `dir` can be dropped and observed (not tmpfs or overlay-in-RAM).
inline bool page_cache_observable(const fs::path& dir) {
  struct statfs s {};
  if (::statfs(dir.c_str(), &s) != 0) return false;
  constexpr long kTmpfs = 0x01021994, kRamfs = 0x858458f6;
  return s.f_type != kTmpfs && s.f_type != kRamfs;
}

}  // namespace fp::testing
