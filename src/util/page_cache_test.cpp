#include "testing/scratch_files.h"
#include "util/page_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>


namespace fp {
namespace {

using namespace testing;

// Pages resident at the snapshot stay; every other page that was read since is dropped again.
TEST(PageCache, DropsOnlyThePagesThatWereNotResident) {
  ScratchDir d;
  if (!page_cache_observable(d.dir())) GTEST_SKIP() << d.dir() << " is in RAM (tmpfs)";
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::string path = d.path("f");
  write_file(path, random_bytes(static_cast<size_t>(64 * page), 1));
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);  // no read-ahead around the pages read below
  std::string buf(static_cast<size_t>(page), '\0');
  for (long p : {3L, 4L, 40L}) ASSERT_EQ(::pread(fd, buf.data(), buf.size(), p * page), page);
  const int64_t before = resident_pages(fd);
  ASSERT_GE(before, 3);

  const PageCacheSnapshot snap = PageCacheSnapshot::take(fd, static_cast<uint64_t>(64 * page));
  ASSERT_TRUE(snap.known());
  EXPECT_EQ(snap.pages(), 64u);
  EXPECT_EQ(static_cast<int64_t>(snap.resident_pages()), before);
  std::string all(static_cast<size_t>(64 * page), '\0');
  ASSERT_EQ(::pread(fd, all.data(), all.size(), 0), static_cast<ssize_t>(all.size()));
  ASSERT_EQ(resident_pages(fd), 64);
  snap.drop_new_pages(fd, 0, static_cast<uint64_t>(64 * page));
  EXPECT_EQ(resident_pages(fd), before);
  const PageCacheSnapshot after = PageCacheSnapshot::take(fd, static_cast<uint64_t>(64 * page));
  EXPECT_EQ(after.resident_pages(), snap.resident_pages());
  ::close(fd);
}

TEST(PageCache, EmptyFileIsKnownAndHasNoPages) {
  ScratchDir d;
  write_file(d.path("e"), "");
  int fd = ::open(d.path("e").c_str(), O_RDONLY);
  const PageCacheSnapshot s = PageCacheSnapshot::take(fd, 0);
  EXPECT_TRUE(s.known());
  EXPECT_EQ(s.pages(), 0u);
  s.drop_new_pages(fd, 0, 0);
  ::close(fd);
}

}  // namespace
}  // namespace fp
