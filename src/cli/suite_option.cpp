#include "cli/suite_option.h"

#include <filesystem>
#include <iostream>

#include "util/text.h"

namespace fp {

Result<Suite> command_suite(const std::string& root_option, const std::vector<std::string>& case_paths) {
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  return find_suite(root_option, ec ? "." : cwd, case_paths);
}

void take_one_case_arg(Args& args, OneCaseArgs& o) {
  const std::string& a = args.arg();
  if (a == "--root") {
    o.root = args.value();
  } else if (a == "--quiet") {
    o.quiet = true;
  } else if (args.is_option()) {
    args.usage_error("unknown option " + quote(a));
  } else if (!o.case_path.empty()) {
    args.usage_error("one case at a time (got " + quote(o.case_path) + " and " + quote(a) + ")");
  } else {
    o.case_path = a;
  }
}

std::optional<Suite> one_case_suite(const std::string& command, const OneCaseArgs& o, const char* usage, int usage_exit,
                                    int incomplete_exit, int* exit_code) {
  if (o.case_path.empty()) {
    std::cerr << "flashproof " << command << ": name a case file, e.g. cases/chat-tiny-short.json\n" << usage;
    *exit_code = usage_exit;
    return std::nullopt;
  }
  auto suite = command_suite(o.root, {o.case_path});
  if (!suite) {
    std::cerr << "flashproof " << command << ": " << suite.error().message << "\n";
    *exit_code = incomplete_exit;
    return std::nullopt;
  }
  return *suite;
}

}  // namespace fp
