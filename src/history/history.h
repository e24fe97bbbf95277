// The history of runs on this machine, so that the last result and the one before are one command
// away (`flashproof diff --last`, `flashproof history`), and one `diff` away with plain tools:
//
//   <results>/<fingerprint id>/<case>/<UTC stamp>-<pid>/{result.txt,result.json,...}   one run
//   <results>/<fingerprint id>/<case>/latest   -> <UTC stamp>-<pid>   (symlinks, replaced atomically)
//   <results>/<fingerprint id>/<case>/previous -> <UTC stamp>-<pid>
//   <results>/history.tsv   every finished run, oldest first, across fingerprints (so a runtime
//                           upgrade still diffs against the last run before it):
//                           finished_utc \t fingerprint \t case \t status \t run folder
//
// history.tsv is rewritten whole under an exclusive lock (flock on <results>/.history.lock) through
// write_file_atomic, so concurrent runs (CTest -j) never lose or tear a line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

struct HistoryEntry {
  std::string finished_utc;  // 2026-11-30T00:00:23Z
  std::string fingerprint;   // fingerprint id
  std::string case_name;
  std::string status;        // pass | fail | incomplete
  std::string run_dir;       // relative to the results root when inside it, else absolute
};

// <results_root>/history.tsv
std::string history_path(const std::string& results_root);

// Appends `entry` to history.tsv and points the case folder's `latest` (and `previous`, the run
// before it in that folder) at it. The run folder must exist and hold its result.json: the history
// lists only runs whose result files were written.
Status record_run(const std::string& results_root, HistoryEntry entry);

// Every entry, oldest first; a missing file is an empty history. A malformed line is an error
// naming the file and line (never skipped silently).
Result<std::vector<HistoryEntry>> load_history(const std::string& results_root);

// The entries of one case, oldest first (any fingerprint when `fingerprint` is empty).
std::vector<HistoryEntry> runs_of_case(const std::vector<HistoryEntry>& history, const std::string& case_name,
                                       const std::string& fingerprint = "");
// The case names in the history, in order of their latest run.
std::vector<std::string> cases_in_history(const std::vector<HistoryEntry>& history);

// Absolute path of an entry's run folder.
std::string run_dir_path(const std::string& results_root, const HistoryEntry& entry);

// Resolves what a user named to result.json files, one per case:
//   a result.json file, or a run folder holding one       -> that run
//   a case folder (run folders inside; `latest` if there)  -> its latest run
//   a fingerprint folder or any folder of case folders     -> the latest run of each case
// Errors name the path and what was expected.
Result<std::vector<std::string>> resolve_results(const std::string& path);

// The results root above what a user named: `start` (or its folder, for a file) or up to 5 folders
// above it, the first holding history.tsv; "" when none does.
std::string find_results_root(const std::string& start);

// The latest run of every case in <results_root>/history.tsv whose result.json is still there
// (across fingerprints); none when the history cannot be read.
std::vector<std::string> latest_results_in_history(const std::string& results_root);

// `file` (ab.json, matrix.json) under `root` (depth <= 4) in run folders named `folder_prefix`<UTC
// stamp>, the latest (by folder name) per case folder; `root`'s own when it holds the file.
std::vector<std::string> latest_run_files(const std::string& root, const std::string& file,
                                          const std::string& folder_prefix);

}  // namespace fp
