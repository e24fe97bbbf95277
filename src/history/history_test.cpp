#include "history/history.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

std::string fresh_root(const std::string& name) {
  std::string root = ::testing::TempDir() + "fp_history_" + name;
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

std::string make_run(const std::string& root, const std::string& fpid, const std::string& case_name, const std::string& stamp) {
  std::string dir = root + "/" + fpid + "/" + case_name + "/" + stamp;
  fs::create_directories(dir);
  EXPECT_TRUE(write_file_atomic(dir + "/result.json", "{}\n").ok());
  return dir;
}

TEST(History, RecordsRunsAndPointsLatestAndPrevious) {
  std::string root = fresh_root("record");
  std::string a = make_run(root, "fp1", "chat", "20261130T000001Z-1");
  ASSERT_TRUE(record_run(root, {"2026-11-30T00:00:01Z", "fp1", "chat", "pass", a}).ok());
  std::string b = make_run(root, "fp1", "chat", "20261130T000002Z-2");
  ASSERT_TRUE(record_run(root, {"2026-11-30T00:00:02Z", "fp1", "chat", "fail", b}).ok());
  std::string c = make_run(root, "fp2", "chat", "20261201T000001Z-3");
  ASSERT_TRUE(record_run(root, {"2026-12-01T00:00:01Z", "fp2", "chat", "pass", c}).ok());

  auto h = load_history(root);
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->size(), 3u);
  EXPECT_EQ((*h)[0].run_dir, "fp1/chat/20261130T000001Z-1");  // relative to the results root
  auto chat = runs_of_case(*h, "chat");
  ASSERT_EQ(chat.size(), 3u);
  EXPECT_EQ(chat.back().fingerprint, "fp2");  // across fingerprints: the night before an upgrade counts
  EXPECT_EQ(runs_of_case(*h, "chat", "fp1").size(), 2u);
  EXPECT_EQ(run_dir_path(root, chat.back()), root + "/fp2/chat/20261201T000001Z-3");

  EXPECT_EQ(fs::read_symlink(root + "/fp1/chat/latest").string(), "20261130T000002Z-2");
  EXPECT_EQ(fs::read_symlink(root + "/fp1/chat/previous").string(), "20261130T000001Z-1");
  EXPECT_TRUE(fs::exists(root + "/fp1/chat/latest/result.json"));
  EXPECT_FALSE(fs::exists(root + "/fp2/chat/previous"));
}

TEST(History, ARunWhoseResultFilesWereNotWrittenIsNotRecorded) {
  std::string root = fresh_root("noresult");
  std::string dir = root + "/fp/chat/20261130T000001Z-1";
  fs::create_directories(dir);
  auto st = record_run(root, {"2026-11-30T00:00:01Z", "fp", "chat", "pass", dir});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find(dir + ": holds no result.json"), std::string::npos) << st.error().message;
  EXPECT_FALSE(fs::exists(root + "/history.tsv"));
  EXPECT_FALSE(fs::exists(root + "/fp/chat/latest"));
}

TEST(History, MalformedLineIsAnErrorNamingFileAndLine) {
  std::string root = fresh_root("bad");
  ASSERT_TRUE(write_file_atomic(root + "/history.tsv", "# header\na\tb\n").ok());
  auto h = load_history(root);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find(root + "/history.tsv:2:"), std::string::npos) << h.error().message;
  std::string run = make_run(root, "fp", "c", "s1");
  EXPECT_FALSE(record_run(root, {"t", "fp", "c", "pass", run}).ok());  // never rewrites a file it cannot read
  auto text = read_file(root + "/history.tsv");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "# header\na\tb\n");
}

TEST(History, ResolvesFilesRunFoldersCaseFoldersAndFingerprintFolders) {
  std::string root = fresh_root("resolve");
  std::string a1 = make_run(root, "fp", "a", "20261130T000001Z-1");
  std::string a2 = make_run(root, "fp", "a", "20261130T000002Z-1");
  std::string b1 = make_run(root, "fp", "b", "20261130T000003Z-1");
  auto file = resolve_results(a1 + "/result.json");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->front(), a1 + "/result.json");
  auto run = resolve_results(a1);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->front(), a1 + "/result.json");
  auto case_dir = resolve_results(root + "/fp/a");
  ASSERT_TRUE(case_dir.ok());
  ASSERT_EQ(case_dir->size(), 1u);
  EXPECT_EQ(case_dir->front(), a2 + "/result.json");
  auto fp_dir = resolve_results(root + "/fp");
  ASSERT_TRUE(fp_dir.ok()) << fp_dir.error().message;
  ASSERT_EQ(fp_dir->size(), 2u);
  EXPECT_EQ((*fp_dir)[1], b1 + "/result.json");
  auto none = resolve_results(root + "/nope");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find(root + "/nope"), std::string::npos);
}

}  // namespace
}  // namespace fp
