#include "util/file_hash_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/scratch_files.h"
#include "util/sha256.h"
#include "util/text.h"

namespace fp {
namespace {

using namespace testing;
using ::testing::HasSubstr;

class FileHashCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = d_.path("model.gguf");
    cache_ = d_.path("cache/flashproof/sha256.json");
    write_file(model_, "weights one");
  }
  Result<FileHash> hash(bool rehash = false) { return cached_sha256_file(model_, cache_, rehash, notes_); }

  ScratchDir d_;
  std::string model_, cache_;
  std::ostringstream notes_;
};

TEST_F(FileHashCacheTest, ComputedOnceThenFromTheCache) {
  auto first = hash();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first->from_cache);
  EXPECT_EQ(first->sha256, sha256_hex("weights one"));
  auto second = hash();
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->sha256, first->sha256);
  auto j = nlohmann::json::parse(*read_file(cache_));
  const auto& e = j.at("files").at(fs::canonical(model_).string());
  EXPECT_EQ(e.at("sha256"), first->sha256);
  EXPECT_EQ(e.at("size"), 11u);
  EXPECT_TRUE(e.contains("mtime_ns") && e.contains("inode") && e.contains("device"));
  EXPECT_EQ(notes_.str(), "");
}

TEST_F(FileHashCacheTest, RehashReadsTheFileAgain) {
  ASSERT_TRUE(hash().ok());
  auto again = hash(/*rehash=*/true);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->from_cache);
  EXPECT_TRUE(hash()->from_cache);
}

// Same size, other bytes, another mtime: the entry no longer matches. A file replaced by rename
// (a new inode) with the old mtime restored does not match either.
TEST_F(FileHashCacheTest, AChangedFileIsHashedAgain) {
  ASSERT_TRUE(hash().ok());
  write_file(model_, "weights two", /*age_offset_s=*/10);
  auto changed = hash();
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(changed->from_cache);
  EXPECT_EQ(changed->sha256, sha256_hex("weights two"));

  const auto mtime = fs::last_write_time(model_);
  write_file(d_.path("other"), "weights 3!!");
  fs::last_write_time(d_.path("other"), mtime);
  fs::rename(d_.path("other"), model_);
  auto replaced = hash();
  ASSERT_TRUE(replaced.ok());
  EXPECT_FALSE(replaced->from_cache);
  EXPECT_EQ(replaced->sha256, sha256_hex("weights 3!!"));
}

TEST_F(FileHashCacheTest, ARecentlyWrittenFileIsNotCached) {
  std::ofstream(model_) << "still being copied";
  ASSERT_TRUE(hash().ok());
  EXPECT_FALSE(hash()->from_cache);
}

TEST_F(FileHashCacheTest, ACorruptCacheIsIgnoredWithAWarningAndRewritten) {
  const std::vector<std::string> bads = {"{\"version\": 1, \"files\": {", "[1, 2]", "{\"version\": 99, \"files\": {}}",
                                         "{\"version\": 1, \"files\": {\"" + model_ + "\": {\"sha256\": 5}}}"};
  for (const std::string& bad : bads) {
    fs::create_directories(fs::path(cache_).parent_path());
    std::ofstream(cache_) << bad;
    notes_.str("");
    auto h = hash();
    ASSERT_TRUE(h.ok()) << bad;
    EXPECT_FALSE(h->from_cache) << bad;
    EXPECT_EQ(h->sha256, sha256_hex("weights one"));
    EXPECT_TRUE(hash()->from_cache) << "not rewritten after " << bad;
  }
  std::ofstream(cache_) << "{not json";
  notes_.str("");
  ASSERT_TRUE(hash().ok());
  EXPECT_THAT(notes_.str(), HasSubstr("warning: hash cache " + cache_ + " ignored (not valid JSON)"));
}

TEST_F(FileHashCacheTest, AnUnwritableCacheIsAWarningNotAFailure) {
  cache_ = "/dev/null/flashproof/sha256.json";
  auto h = hash();
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->sha256, sha256_hex("weights one"));
  EXPECT_THAT(notes_.str(), HasSubstr("warning: hash cache not written"));
}

TEST_F(FileHashCacheTest, NoCacheFileMeansNoCache) {
  cache_ = "";
  EXPECT_FALSE(hash()->from_cache);
  EXPECT_FALSE(hash()->from_cache);
}

// Entries of files that are gone are dropped when the cache is written; others' entries are kept.
TEST_F(FileHashCacheTest, KeepsOtherFilesAndForgetsGoneOnes) {
  const std::string other = d_.path("other.gguf");
  write_file(other, "other");
  ASSERT_TRUE(cached_sha256_file(other, cache_, false, notes_).ok());
  ASSERT_TRUE(hash().ok());
  auto j = nlohmann::json::parse(*read_file(cache_));
  EXPECT_EQ(j.at("files").size(), 2u);
  fs::remove(other);
  ASSERT_TRUE(hash(/*rehash=*/true).ok());
  j = nlohmann::json::parse(*read_file(cache_));
  EXPECT_EQ(j.at("files").size(), 1u);
}

TEST_F(FileHashCacheTest, MissingFileIsAnError) {
  model_ = d_.path("absent.gguf");
  auto h = hash();
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.error().message, HasSubstr(model_ + ": cannot stat"));
}

TEST(DefaultHashCacheFile, FromTheEnvironment) {
  const char* saved[3] = {std::getenv("FLASHPROOF_HASH_CACHE"), std::getenv("XDG_CACHE_HOME"), std::getenv("HOME")};
  const std::string keep[3] = {saved[0] ? saved[0] : "", saved[1] ? saved[1] : "", saved[2] ? saved[2] : ""};
  ::setenv("FLASHPROOF_HASH_CACHE", "/x/h.json", 1);
  EXPECT_EQ(default_hash_cache_file(), "/x/h.json");
  ::unsetenv("FLASHPROOF_HASH_CACHE");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(default_hash_cache_file(), "/xdg/flashproof/sha256.json");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/op", 1);
  EXPECT_EQ(default_hash_cache_file(), "/home/op/.cache/flashproof/sha256.json");
  ::unsetenv("HOME");
  EXPECT_EQ(default_hash_cache_file(), "");
  const char* names[3] = {"FLASHPROOF_HASH_CACHE", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i)
    if (saved[i]) ::setenv(names[i], keep[i].c_str(), 1);
}

}  // namespace
}  // namespace fp
