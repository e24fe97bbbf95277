#include "util/text.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

namespace fp {
namespace {

TEST(MarkupEscape, EscapesWhatEndsATagOrAnAttribute) {
  EXPECT_EQ(markup_escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(markup_escape("line 1\r\nline 2"), "line 1\r\nline 2");
  EXPECT_EQ(markup_escape(""), "");
}

TEST(MarkupEscape, FlattensLineBreaksForOneLineAttributes) {
  EXPECT_EQ(markup_escape("line 1\r\nline <2>", true), "line 1 line &lt;2&gt;");
}

TEST(Quote, EscapesControlCharactersAndQuotes) {
  EXPECT_EQ(quote("a\tb"), "\"a\\tb\"");
  EXPECT_EQ(quote("say \"hi\""), "\"say \\\"hi\\\"\"");
}

TEST(WithPlaceholder, ReplacesTheFolderOnlyWhereItIsAWholePath) {
  EXPECT_EQ(with_placeholder("/srv/suite/cases/c.json", "/srv/suite", "{suite}"), "{suite}/cases/c.json");
  EXPECT_EQ(with_placeholder("/srv/suite", "/srv/suite", "{suite}"), "{suite}");
  EXPECT_EQ(with_placeholder("a=/srv/suite/x:/srv/suite/y", "/srv/suite", "{suite}"), "a={suite}/x:{suite}/y");
  // Another folder that merely starts or ends the same way is left alone.
  EXPECT_EQ(with_placeholder("/srv/suite-b/x", "/srv/suite", "{suite}"), "/srv/suite-b/x");
  EXPECT_EQ(with_placeholder("/tmp/srv/suite/x", "/srv/suite", "{suite}"), "/tmp/srv/suite/x");
  EXPECT_EQ(with_placeholder("/srv/suite/x", "", "{suite}"), "/srv/suite/x");
}

TEST(ReadFile, RefusesWhatIsNotARegularFileWithoutBlocking) {
  const std::string dir = ::testing::TempDir() + "/fp-read-file-special";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/folder");
  ASSERT_EQ(::mkfifo((dir + "/pipe").c_str(), 0644), 0);
  auto pipe = read_file(dir + "/pipe");  // a reader of a FIFO without a writer would wait forever
  ASSERT_FALSE(pipe.ok());
  EXPECT_EQ(pipe.error().message, dir + "/pipe: cannot read: a named pipe (FIFO), not a regular file");
  auto folder = read_file(dir + "/folder");
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.error().message, dir + "/folder: cannot read: a folder, not a regular file");
  std::filesystem::remove_all(dir);
}

TEST(ReadFile, NeverHoldsMoreThanItsLimit) {
  const std::string path = ::testing::TempDir() + "/fp-read-file-limit";
  ASSERT_TRUE(write_file_atomic(path, std::string(1000, 'x')));
  EXPECT_TRUE(read_file(path, 1000).ok());
  auto over = read_file(path, 999);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message, path + ": larger than the limit of 999 bytes");
  std::filesystem::remove(path);
}

TEST(WriteFilesAtomic, AFileThatCannotBeWrittenTakesTheOnesBeforeItAway) {
  const std::string dir = ::testing::TempDir() + "/fp-write-files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/b.txt/x");  // b.txt's name is a folder: the rename fails
  auto st = write_files_atomic({{dir + "/a.json", "{}"}, {dir + "/b.txt", "text"}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, dir + "/b.txt: rename failed: Is a directory");
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fp
