// Which pages of a file the kernel's page cache holds, so that a reader can leave the cache as it
// found it. Used when hashing model files: reading a 70 GB model right before its runtime starts
// would otherwise warm it (the next load is faster than the operator's own cold start) or evict what
// was cached (slower), depending on the machine's memory.
#pragma once

#include <cstdint>
#include <vector>

namespace fp {

class PageCacheSnapshot {
 public:
  // The residency of the file's first `size` bytes now (mincore(2) over a read-only mapping, which
  // reads nothing). Unknown when the file cannot be mapped (a pipe, some file systems).
  static PageCacheSnapshot take(int fd, uint64_t size);

  bool known() const { return known_; }
  // Pages resident at the snapshot, of the pages the file had then.
  uint64_t resident_pages() const;
  uint64_t pages() const { return resident_.size(); }

  // Drops the pages of [offset, offset + length) from the page cache (posix_fadvise DONTNEED) except
  // those that were resident at the snapshot; when the snapshot is unknown, drops them all (a reader
  // of a whole file should not leave it cached behind the operator's back). Dirty or mapped pages
  // stay, as the kernel decides.
  void drop_new_pages(int fd, uint64_t offset, uint64_t length) const;

 private:
  bool known_ = false;
  uint64_t page_ = 4096;
  std::vector<unsigned char> resident_;  // one byte per page: bit 0 set when resident
};

// How many of the file's pages are in the page cache now (for tests and benchmarks); -1 when unknown.
int64_t resident_pages(int fd);

}  // namespace fp
