#include "util/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace fp {

PageCacheSnapshot PageCacheSnapshot::take(int fd, uint64_t size) {
  PageCacheSnapshot s;
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) s.page_ = static_cast<uint64_t>(page);
  if (size == 0) {
    s.known_ = true;
    return s;
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return s;
  s.resident_.assign((size + s.page_ - 1) / s.page_, 0);
  s.known_ = ::mincore(map, size, s.resident_.data()) == 0;
  ::munmap(map, size);
  if (!s.known_) s.resident_.clear();
  return s;
}

uint64_t PageCacheSnapshot::resident_pages() const {
  return static_cast<uint64_t>(std::count_if(resident_.begin(), resident_.end(), [](unsigned char c) { return c & 1; }));
}

void PageCacheSnapshot::drop_new_pages(int fd, uint64_t offset, uint64_t length) const {
  if (length == 0) return;
  if (!known_) {
    ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
    return;
  }
  // Whole pages only: a partly covered page is dropped with the range that covers its start.
  const uint64_t first = offset / page_, end = (offset + length + page_ - 1) / page_;
  uint64_t run = first;
  auto flush = [&](uint64_t upto) {
    if (upto > run)
      ::posix_fadvise(fd, static_cast<off_t>(run * page_), static_cast<off_t>((upto - run) * page_), POSIX_FADV_DONTNEED);
  };
  for (uint64_t p = first; p < end; ++p) {
    const bool was_resident = p < resident_.size() && (resident_[p] & 1);
    if (!was_resident) continue;
    flush(p);
    run = p + 1;
  }
  flush(end);
}

int64_t resident_pages(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return -1;
  PageCacheSnapshot s = PageCacheSnapshot::take(fd, static_cast<uint64_t>(st.st_size));
  return s.known() ? static_cast<int64_t>(s.resident_pages()) : -1;
}

}  // namespace fp
