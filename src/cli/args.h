// A subcommand's arguments, read one at a time. An option's missing or malformed value is a usage
// error: "flashproof CMD: OPTION VALUE: expected ..." and the usage on stderr, exit 64, before
// anything has started (no runtime launched, no file written).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fp {

inline constexpr int kUsageExit = 64;

class Args {
 public:
  Args(std::string command, int argc, char** argv, std::string usage)
      : command_(std::move(command)), usage_(std::move(usage)), argc_(argc), argv_(argv) {}

  // Lets an option carry its value in the same argument, "--runtime=llama-server": arg() is then the
  // option's name and value() the text after '='. Off unless asked for (explain takes both forms).
  void accept_inline_values() { inline_values_ = true; }

  // Moves to the next argument; false when there is none.
  bool next();
  const std::string& arg() const { return arg_; }
  // The current argument as given (with an inline "=value").
  const std::string& given() const { return given_; }
  bool is_option() const { return !arg_.empty() && arg_[0] == '-'; }

  // Whether the current option has a value to take: an inline one, or a next argument.
  bool has_value() const;
  // The value of the current option (inline, else the next argument).
  std::string value();
  // An optional value (--resource-spec [FILE]): the next argument when there is one and it is not an
  // option; else nothing is taken.
  std::optional<std::string> optional_value();
  // The value as a whole number from lo to hi.
  int whole(long lo, long hi);
  // Every argument after the current one (a command to run: `-- RUNTIME ARG...`); consumes them.
  std::vector<std::string> rest();
  // The value as a number from lo to hi; `meaning` is added to the error ("1.0 = twice as slow").
  double number(double lo, double hi, const std::string& meaning = "");

  // Prints "flashproof CMD: MESSAGE" and the usage, then exits 64.
  [[noreturn]] void usage_error(const std::string& message) const;
  // Prints "flashproof CMD: MESSAGE" alone (the message says what is valid), then exits 64.
  [[noreturn]] void brief_usage_error(const std::string& message) const;
  // Prints "flashproof CMD: MESSAGE" and the usage, and returns 64: for a command that returns its
  // exit code to an in-process caller (explain, from its tests) instead of exiting.
  int print_usage_error(const std::string& message) const;

 private:
  std::string command_, usage_;
  int argc_;
  char** argv_;
  int i_ = -1;
  bool inline_values_ = false;
  std::string arg_, given_;
  std::optional<std::string> inline_value_;
};

}  // namespace fp
