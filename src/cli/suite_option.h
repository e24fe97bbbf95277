// The suite a command works in (case/suite.h): --root DIR, else the nearest folder holding
// flashproof-suite.json from the working directory upward, else from the case files named.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "case/suite.h"
#include "cli/args.h"
#include "util/result.h"

namespace fp {

// The option's lines in every command's usage text (a literal, pasted into each usage literal).
#define FP_ROOT_OPTION_USAGE                                                                       \
  "  --root DIR           the suite (default: the nearest folder holding flashproof-suite.json, from\n" \
  "                       the working directory up, else from the case file's folder up)\n"

Result<Suite> command_suite(const std::string& root_option, const std::vector<std::string>& case_paths = {});

// What every one-case command (ab, matrix) reads besides its own options: --root DIR, --quiet and
// the one case file.
struct OneCaseArgs {
  std::string root, case_path;
  bool quiet = false;
};
// In the argument loop, for an argument the command's own options did not take: one of the above,
// else a usage error (an unknown option, or a second case file).
void take_one_case_arg(Args& args, OneCaseArgs& o);
// After the loop: the case's suite. Without a case, or when the suite cannot be found, prints
// "flashproof COMMAND: ..." on stderr and sets *exit_code (usage_exit without a case, incomplete_exit
// when the suite is not found).
std::optional<Suite> one_case_suite(const std::string& command, const OneCaseArgs& o, const char* usage, int usage_exit,
                                    int incomplete_exit, int* exit_code);

}  // namespace fp
