#include "flow/passes/case_context.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/sha256.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

// A scratch suite whose case names a split GGUF of 3 shards; the runtime is /bin/true (the
// model check comes before any launch) and the hash cache is the scratch folder's own.
class SplitModelContext : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path("/var/tmp") / ("fp-context-test-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "fixtures/prompts/chat");
    fs::create_directories(root_ / "models");
    fs::create_directories(root_ / "cases");
    std::ofstream(root_ / "fixtures/prompts/chat/hello.txt") << "hi\n";
    std::ofstream(root_ / kSuiteMarker) << suite_marker_text("fixtures/prompts");
    json shas = json::array();
    for (int i = 1; i <= 3; ++i) {
      const std::string bytes = "shard " + std::to_string(i);
      std::ofstream(shard(i)) << bytes;
      fs::last_write_time(shard(i), fs::file_time_type::clock::now() - std::chrono::hours(1));
      shas.push_back(sha256_hex(bytes));
    }
    json c = json::parse(R"({
      "name": "split", "job": "chat", "runtime": "llama-server",
      "model": {"path": "models/big-00001-of-00003.gguf"},
      "shape": {"context": 2048, "prompt_set": "chat", "max_output_tokens": 8},
      "launch": {"argv": ["{runtime}", "-m", "{model}", "--port", "{port}", "-fa", "{flag}"]},
      "flag": {"on": "on", "off": "off", "use": "on"},
      "expect": {"fused_attention": true, "backend": "CPU"},
      "plan": {"warmup": 1, "repetitions": 3, "timeout_s": 120}
    })");
    c["model"]["sha256"] = shas;
    case_ = (root_ / "cases/split.json").string();
    std::ofstream(case_) << c.dump(2);
    saved_server_ = getenv_or("FLASHPROOF_LLAMA_SERVER");
    saved_cache_ = getenv_or("FLASHPROOF_HASH_CACHE");
    ::setenv("FLASHPROOF_LLAMA_SERVER", "/bin/true", 1);
    ::setenv("FLASHPROOF_HASH_CACHE", (root_ / "sha256.json").c_str(), 1);
  }
  void TearDown() override {
    restore("FLASHPROOF_LLAMA_SERVER", saved_server_);
    restore("FLASHPROOF_HASH_CACHE", saved_cache_);
    fs::remove_all(root_);
  }
  static std::optional<std::string> getenv_or(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  static void restore(const char* name, const std::optional<std::string>& v) {
    if (v) ::setenv(name, v->c_str(), 1);
    else ::unsetenv(name);
  }
  std::string shard(int i) const { return (root_ / ("models/big-0000" + std::to_string(i) + "-of-00003.gguf")).string(); }
  ResolvedCase resolve(bool rehash = false) {
    auto suite = load_suite(root_.string());
    if (!suite) return suite.error();
    return resolve_case_context(case_, *suite, "", rehash);
  }

  fs::path root_;
  std::string case_;
  std::optional<std::string> saved_server_, saved_cache_;
};

TEST_F(SplitModelContext, EveryShardIsChecked) {
  auto ok = resolve();
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->c.model.shard_sha256.size(), 3u);

  // Shard 3 replaced by other bytes (a new inode, so the cache does not hide it).
  std::ofstream(shard(3) + ".new") << "shard X";
  fs::rename(shard(3) + ".new", shard(3));
  auto bad = resolve();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.exit_code(), kResolveIncomplete);
  EXPECT_THAT(bad.error().message, HasSubstr("field \"model.sha256[2]\""));
  EXPECT_THAT(bad.error().message, HasSubstr(shard(3) + " (shard 3 of 3) has sha256 " + sha256_hex("shard X")));

  fs::remove(shard(2));
  auto missing = resolve();
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr(shard(2) + ": shard 2 of 3"));
}

// A cached hash is trusted while the file's size, mtime and inode stay; --rehash reads it again and
// finds a change made behind the cache's back (same size, same mtime restored, same inode).
TEST_F(SplitModelContext, RehashSeesWhatTheCacheCannot) {
  ASSERT_TRUE(resolve().ok());
  const auto mtime = fs::last_write_time(shard(2));
  std::fstream(shard(2), std::ios::in | std::ios::out | std::ios::binary) << "SHARD";
  fs::last_write_time(shard(2), mtime);
  EXPECT_TRUE(resolve().ok()) << "the cache should have answered for shard 2";
  auto rehashed = resolve(/*rehash=*/true);
  ASSERT_FALSE(rehashed.ok());
  EXPECT_THAT(rehashed.error().message, HasSubstr("(shard 2 of 3) has sha256 " + sha256_hex("SHARD 2")));
}

}  // namespace
}  // namespace fp
