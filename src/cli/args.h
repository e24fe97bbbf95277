// A subcommand's arguments, read one at a time. An option's missing or malformed value is a usage
// error: "flashproof CMD: OPTION VALUE: expected ..." and the usage on stderr, exit 64, before
// anything has started (no runtime launched, no file written).
#pragma once

#include <string>
#include <vector>

namespace fp {

inline constexpr int kUsageExit = 64;

class Args {
 public:
  Args(std::string command, int argc, char** argv, std::string usage)
      : command_(std::move(command)), usage_(std::move(usage)), argc_(argc), argv_(argv) {}

  // Moves to the next argument; false when there is none.
  bool next();
  const std::string& arg() const { return arg_; }
  bool is_option() const { return !arg_.empty() && arg_[0] == '-'; }

  // The value of the current option (the next argument).
  std::string value();
  // The value as a whole number from lo to hi.
  int whole(long lo, long hi);
  // Every argument after the current one (a command to run: `-- RUNTIME ARG...`); consumes them.
  std::vector<std::string> rest();
  // The value as a number from lo to hi; `meaning` is added to the error ("1.0 = twice as slow").
  double number(double lo, double hi, const std::string& meaning = "");

  // Prints "flashproof CMD: MESSAGE" and the usage, then exits 64.
  [[noreturn]] void usage_error(const std::string& message) const;

 private:
  std::string command_, usage_;
  int argc_;
  char** argv_;
  int i_ = -1;
  std::string arg_;
};

}  // namespace fp
