#include "util/sha256.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "testing/scratch_files.h"
#include "util/page_cache.h"

namespace fp {
namespace {

using namespace testing;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks: exercises the padding path across a block boundary.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// A file of several read chunks (4 MiB each) and an odd tail hashes as its bytes do.
TEST(Sha256, FileEqualsItsBytes) {
  ScratchDir d;
  const std::string bytes = random_bytes((9 << 20) + 12345, 7);
  write_file(d.path("m.gguf"), bytes);
  auto h = sha256_file(d.path("m.gguf"));
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(*h, sha256_hex(bytes));
  write_file(d.path("empty"), "");
  EXPECT_EQ(*sha256_file(d.path("empty")), sha256_hex(""));
}

TEST(Sha256, MissingFileNamesIt) {
  auto h = sha256_file("/nonexistent/model.gguf");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("/nonexistent/model.gguf: cannot open"), std::string::npos) << h.error().message;
}

// Hashing leaves the page cache as it found it: a file out of the cache stays out, a cached one stays.
TEST(Sha256, LeavesThePageCacheAsItFoundIt) {
  ScratchDir d;
  if (!page_cache_observable(d.dir())) GTEST_SKIP() << d.dir() << " is in RAM (tmpfs): its pages cannot leave the cache";
  const std::string path = d.path("m.gguf");
  write_file(path, random_bytes(32 << 20, 3));
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  const int64_t pages = (32 << 20) / ::sysconf(_SC_PAGESIZE);
  ASSERT_EQ(resident_pages(fd), 0) << "the kernel kept the pages: cannot observe here";
  // The kernel may drop or keep a page of its own accord (memory pressure from other tenants: 8191
  // of 8192 was seen under load); the faults under test move all of them, so 1% is the slack.
  const int64_t slack = pages / 100;
  ASSERT_TRUE(sha256_file(path).ok());
  EXPECT_LE(resident_pages(fd), slack) << "hashing left the model in the page cache";

  std::string sink(32 << 20, '\0');
  ASSERT_EQ(::pread(fd, sink.data(), sink.size(), 0), static_cast<ssize_t>(sink.size()));  // now cached
  const int64_t cached = resident_pages(fd);
  if (cached < pages - slack) GTEST_SKIP() << "the kernel kept only " << cached << " of " << pages << " pages: cannot observe here";
  ASSERT_TRUE(sha256_file(path).ok());
  EXPECT_GE(resident_pages(fd), cached - slack) << "hashing evicted pages that were cached before";
  ::close(fd);
}

}  // namespace
}  // namespace fp
