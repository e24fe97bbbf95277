// A run's own folder. A run never reads or appends to a log it did not write, and two runs never
// write into one folder at once: the folder is claimed before the run writes anything into it.
//  - Created when missing (with its parents).
//  - Locked for the claim's lifetime: flock(LOCK_EX) on <dir>/.flashproof.lock, which holds the
//    claiming process's pid. The kernel drops the lock when that process ends in any way (SIGKILL
//    included), so a lock is never left stale; the file itself stays, and means nothing then.
//  - Refused when it holds anything but that lock file: the files of an earlier run (its runtime
//    logs would be appended to and read back as this run's evidence) or anything else.
#pragma once

#include <string>

#include "util/result.h"

namespace fp {

inline constexpr const char* kRunFolderLock = ".flashproof.lock";

class RunFolderClaim {
 public:
  RunFolderClaim() = default;
  RunFolderClaim(const RunFolderClaim&) = delete;
  RunFolderClaim& operator=(const RunFolderClaim&) = delete;
  RunFolderClaim(RunFolderClaim&& other) noexcept;
  RunFolderClaim& operator=(RunFolderClaim&& other) noexcept;
  ~RunFolderClaim();  // releases the lock
  const std::string& dir() const { return dir_; }

 private:
  friend Result<RunFolderClaim> claim_run_folder(const std::string& dir, const std::string& how_named);
  std::string dir_;
  int fd_ = -1;
};

// Claims `dir` as above. `how_named` says where the folder came from, for the refusal's advice:
// "--out" (the operator named it: choose another), or "" (flashproof made the name up).
// Errors name the folder, the lock file and its holder's pid, or a few of the entries found.
Result<RunFolderClaim> claim_run_folder(const std::string& dir, const std::string& how_named);

// A folder name flashproof makes up (<stamp>-<pid>) that is not taken: `dir` when nothing is there,
// else the first of dir-2, dir-3, ... that is free (one process running a case twice in a second).
std::string unused_folder_name(const std::string& dir);

}  // namespace fp
