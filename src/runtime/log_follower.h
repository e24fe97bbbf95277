// Follows the log of a server flashproof did not start, from the run's start only: lines written
// before the run began (an earlier start-up, another configuration) are never evidence.
//  - a file: opened at the start and read from its end at that moment; a file rotated meanwhile
//    (renamed away, or truncated in place) is read to its end, then the new file from its start;
//  - a command's output (`journalctl -fu UNIT`, `docker logs -f NAME`, `kubectl logs -f POD`):
//    started without a shell in its own process group, its output kept beside the run, stopped at
//    the end (runtime/process.h: never left behind). Such commands first replay older lines; what
//    it prints until it first falls quiet is dropped.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/process.h"
#include "util/result.h"

namespace fp {

class LogFollower {
 public:
  // Starts following `path`, which must exist and be readable.
  static Result<std::unique_ptr<LogFollower>> follow_file(const std::string& path);
  // Starts `argv`, its output appended to `output_path`; returns once the output has been quiet for
  // `settle_s` (at most `max_settle_s`). An error when it cannot be started or ends at once.
  static Result<std::unique_ptr<LogFollower>> follow_command(const std::vector<std::string>& argv,
                                                             const std::string& output_path, double settle_s = 0.5,
                                                             double max_settle_s = 5.0);
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;

  // Waits until nothing new arrived for `quiet_s` (at most `max_s`: a server logging other traffic
  // never falls quiet), writes what arrived since the start to `out_path`, and stops following (the
  // command is stopped). Returns the bytes written.
  Result<size_t> finish(const std::string& out_path, double quiet_s = 0.3, double max_s = 3.0);

  // "log file /var/log/llama.log" or "output of journalctl -fu llama", for reports.
  const std::string& source() const { return source_; }
  // What the reader should know: rotation seen, the command ended early, bytes dropped at start.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  LogFollower() = default;
  // Bytes readable past what was copied so far (the followed file's, then its successor's).
  off_t pending() const;
  Result<size_t> copy_new(int out_fd);

  std::string path_, source_;
  int fd_ = -1;
  off_t pos_ = 0;
  ino_t inode_ = 0;
  std::optional<Process> command_;
  std::vector<std::string> notes_;
};

}  // namespace fp
