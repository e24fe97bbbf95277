// The suite a command works in (case/suite.h): --root DIR, else the nearest folder holding
// flashproof-suite.json from the working directory upward, else from the case files named.
#pragma once

#include <string>
#include <vector>

#include "case/suite.h"
#include "util/result.h"

namespace fp {

// The option's lines in every command's usage text (a literal, pasted into each usage literal).
#define FP_ROOT_OPTION_USAGE                                                                       \
  "  --root DIR           the suite (default: the nearest folder holding flashproof-suite.json, from\n" \
  "                       the working directory up, else from the case file's folder up)\n"

Result<Suite> command_suite(const std::string& root_option, const std::vector<std::string>& case_paths = {});

}  // namespace fp
