#include "history/history.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "util/text.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHeader = "# finished_utc\tfingerprint\tcase\tstatus\trun_dir\n";

// An exclusive flock held for the object's life.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

bool has_result(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "result.json", ec);
}

// Run folders (real folders holding result.json) inside `dir`, sorted by name = by UTC stamp.
std::vector<fs::path> run_folders(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_symlink(ec) || !e.is_directory(ec)) continue;
    if (has_result(e.path())) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Replaces `link` with a symlink to `target` atomically (a temporary link renamed over it).
Status point_link(const fs::path& link, const std::string& target) {
  const fs::path tmp = link.string() + ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_directory_symlink(target, tmp, ec);
  if (ec) return make_error(tmp.string() + ": cannot create symlink: " + ec.message());
  fs::rename(tmp, link, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return make_error(link.string() + ": cannot replace symlink: " + ec.message());
  }
  return ok_status();
}

std::string entry_line(const HistoryEntry& e) {
  return e.finished_utc + "\t" + e.fingerprint + "\t" + e.case_name + "\t" + e.status + "\t" + e.run_dir + "\n";
}

}  // namespace

std::string history_path(const std::string& results_root) { return results_root + "/history.tsv"; }

Result<std::vector<HistoryEntry>> load_history(const std::string& results_root) {
  const std::string path = history_path(results_root);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::vector<HistoryEntry>{};
  FP_TRY(std::string text, read_file(path));
  std::vector<HistoryEntry> out;
  size_t n = 0;
  for (const auto& line : split_lines(text)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    size_t start = 0;
    for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) f.push_back(line.substr(start, tab - start));
    f.push_back(line.substr(start));
    if (f.size() != 5 || f[2].empty() || f[4].empty())
      return make_error(path + ":" + std::to_string(n) + ": malformed history line " + quote(line) +
                        " (expected 5 tab-separated fields: finished_utc, fingerprint, case, status, run_dir)");
    out.push_back({f[0], f[1], f[2], f[3], f[4]});
  }
  return out;
}

Status record_run(const std::string& results_root, HistoryEntry entry) {
  std::error_code ec;
  fs::create_directories(results_root, ec);
  if (ec) return make_error(results_root + ": cannot create the results folder: " + ec.message());
  const fs::path root = fs::absolute(results_root, ec);
  fs::path run = fs::absolute(entry.run_dir, ec).lexically_normal();
  if (!fs::is_directory(run, ec)) return make_error(run.string() + ": run folder does not exist; not recorded in the history");
  if (!has_result(run)) return make_error(run.string() + ": holds no result.json; the history lists only runs whose result files exist");
  fs::path rel = run.lexically_relative(root.lexically_normal());
  entry.run_dir = !rel.empty() && *rel.begin() != ".." ? rel.string() : run.string();

  FileLock lock(results_root + "/.history.lock");
  if (!lock.ok()) return make_error(results_root + "/.history.lock: cannot lock: " + std::strerror(errno));
  FP_TRY(std::vector<HistoryEntry> history, load_history(results_root));
  std::string text = kHeader;
  for (const auto& e : history) text += entry_line(e);
  text += entry_line(entry);
  FP_TRY_STATUS(write_file_atomic(history_path(results_root), text));

  // latest / previous inside the case folder: the newest two run folders there by stamp.
  const fs::path case_dir = run.parent_path();
  std::vector<fs::path> runs = run_folders(case_dir);
  if (runs.empty()) return ok_status();
  FP_TRY_STATUS(point_link(case_dir / "latest", runs.back().filename().string()));
  if (runs.size() >= 2) FP_TRY_STATUS(point_link(case_dir / "previous", runs[runs.size() - 2].filename().string()));
  return ok_status();
}

std::vector<HistoryEntry> runs_of_case(const std::vector<HistoryEntry>& history, const std::string& case_name,
                                       const std::string& fingerprint) {
  std::vector<HistoryEntry> out;
  for (const auto& e : history)
    if (e.case_name == case_name && (fingerprint.empty() || e.fingerprint == fingerprint)) out.push_back(e);
  return out;
}

std::vector<std::string> cases_in_history(const std::vector<HistoryEntry>& history) {
  std::vector<std::string> out;
  for (auto it = history.rbegin(); it != history.rend(); ++it)
    if (std::find(out.begin(), out.end(), it->case_name) == out.end()) out.push_back(it->case_name);
  std::reverse(out.begin(), out.end());
  return out;
}

std::string run_dir_path(const std::string& results_root, const HistoryEntry& e) {
  if (fs::path(e.run_dir).is_absolute()) return e.run_dir;
  return (fs::path(results_root) / e.run_dir).string();
}

Result<std::vector<std::string>> resolve_results(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_regular_file(p, ec)) return std::vector<std::string>{p.string()};
  if (!fs::is_directory(p, ec))
    return make_error(path + ": no such result file or folder (expected result.json, a run folder, a case folder or a fingerprint folder)");
  if (has_result(p)) return std::vector<std::string>{(p / "result.json").string()};
  auto latest_in = [](const fs::path& case_dir) -> std::string {
    std::error_code e2;
    if (fs::is_symlink(case_dir / "latest", e2) && has_result(case_dir / "latest")) {
      fs::path target = fs::read_symlink(case_dir / "latest", e2);  // name the run itself, not the link
      return ((target.is_absolute() ? target : case_dir / target) / "result.json").string();
    }
    auto runs = run_folders(case_dir);
    return runs.empty() ? std::string() : (runs.back() / "result.json").string();
  };
  if (std::string one = latest_in(p); !one.empty()) return std::vector<std::string>{one};
  std::vector<fs::path> children;
  for (const auto& e : fs::directory_iterator(p, ec))
    if (!e.is_symlink(ec) && e.is_directory(ec)) children.push_back(e.path());
  std::sort(children.begin(), children.end());
  std::vector<std::string> out;
  for (const auto& c : children)
    if (std::string r = latest_in(c); !r.empty()) out.push_back(r);
  if (out.empty())
    return make_error(path + ": holds no result.json: expected a run folder, a case folder (run folders inside) or a folder of case folders");
  return out;
}

std::string find_results_root(const std::string& start) {
  std::error_code ec;
  fs::path p = fs::absolute(start, ec);
  if (fs::is_regular_file(p, ec)) p = p.parent_path();
  for (int i = 0; i < 6 && !p.empty(); ++i) {
    if (fs::is_regular_file(p / "history.tsv", ec)) return p.string();
    if (p == p.parent_path()) break;
    p = p.parent_path();
  }
  return {};
}

std::vector<std::string> latest_run_files(const std::string& root_dir, const std::string& file, const std::string& prefix) {
  const fs::path root(root_dir);
  std::error_code ec;
  if (fs::is_regular_file(root / file, ec)) return {(root / file).string()};
  std::map<std::string, fs::path> by_case;
  if (!fs::is_directory(root, ec)) return {};
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it.depth() > 3) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().filename() != file) continue;
    const fs::path folder = it->path().parent_path();
    if (folder.filename().string().rfind(prefix, 0) != 0) continue;
    const std::string case_dir = folder.parent_path().string();
    auto cur = by_case.find(case_dir);
    if (cur == by_case.end() || cur->second.parent_path().filename() < folder.filename()) by_case[case_dir] = it->path();
  }
  std::vector<std::string> out;
  for (const auto& [k, p] : by_case) out.push_back(p.string());
  return out;
}

std::vector<std::string> latest_results_in_history(const std::string& results_root) {
  std::vector<std::string> latest;
  auto history = load_history(results_root);
  if (!history) return latest;
  std::error_code ec;
  for (const auto& name : cases_in_history(*history)) {
    auto runs = runs_of_case(*history, name);
    for (auto it = runs.rbegin(); it != runs.rend(); ++it)
      if (std::string rp = run_dir_path(results_root, *it) + "/result.json"; fs::is_regular_file(rp, ec)) {
        latest.push_back(rp);
        break;
      }
  }
  return latest;
}

}  // namespace fp
