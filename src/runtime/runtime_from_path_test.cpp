#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "runtime/launcher.h"

namespace fp {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Adapter server_adapter() {
  Adapter a;
  a.name = "llama-server";
  a.executable_name = "llama-server";
  return a;
}

void executable(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "#!/bin/sh\n";
  ::chmod(p.c_str(), 0755);
}

// A prefix laid out as ci/setup.sh lays it out: started through its own loader and libraries.
TEST(RuntimeFromPath, APrefixFolderRunsThroughItsOwnLoader) {
  const fs::path prefix = fs::path(testing::TempDir()) / "rfp-prefix";
  fs::remove_all(prefix);
  executable(prefix / "usr/bin/llama-server");
  executable(prefix / "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  const std::string lib = (prefix / "usr/lib/x86_64-linux-gnu").string();
  auto r = runtime_from_path(prefix.string(), server_adapter());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->prefix, ElementsAre(lib + "/ld-linux-x86-64.so.2", "--library-path", lib + ":" + lib + "/llama",
                                     (prefix / "usr/bin/llama-server").string()));
  // The executable inside such a prefix is started the same way.
  auto e = runtime_from_path((prefix / "usr/bin/llama-server").string(), server_adapter());
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->prefix, r->prefix);
}

TEST(RuntimeFromPath, APlainExecutableOrAFolderWithBinRunsDirectly) {
  const fs::path dir = fs::path(testing::TempDir()) / "rfp-plain";
  fs::remove_all(dir);
  executable(dir / "bin/llama-server");
  auto r = runtime_from_path(dir.string(), server_adapter());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->prefix, ElementsAre((dir / "bin/llama-server").string()));
  auto e = runtime_from_path((dir / "bin/llama-server").string(), server_adapter());
  ASSERT_TRUE(e);
  EXPECT_THAT(e->prefix, ElementsAre((dir / "bin/llama-server").string()));
}

TEST(RuntimeFromPath, ErrorsNameThePathAndWhatWasLookedFor) {
  const fs::path dir = fs::path(testing::TempDir()) / "rfp-empty";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto r = runtime_from_path(dir.string(), server_adapter());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr(dir.string()));
  EXPECT_THAT(r.error().message, HasSubstr("usr/bin/llama-server"));
  auto missing = runtime_from_path("/nonexistent/llama", server_adapter());
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/llama: no such runtime"));
  std::ofstream(dir / "not-exec") << "x";
  auto plain = runtime_from_path((dir / "not-exec").string(), server_adapter());
  ASSERT_FALSE(plain);
  EXPECT_THAT(plain.error().message, HasSubstr("not an executable file"));
}

}  // namespace
}  // namespace fp
