// Test support (header only, for *_test.cpp): runs `flashproof explain` in-process with its
// stdout and stderr captured.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/explain_command.h"

namespace fp::testing {

struct Ran {
  int code;
  std::string out, err;
};

// args without the subcommand's name: {"--runtime", "llama-server", "--log", ...}.
inline Ran run_explain(std::vector<std::string> args) {
  args.insert(args.begin(), "explain");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = explain_command(static_cast<int>(argv.size()), argv.data());
  return {code, ::testing::internal::GetCapturedStdout(), ::testing::internal::GetCapturedStderr()};
}

}  // namespace fp::testing
