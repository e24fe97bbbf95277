#include "cli/suite_option.h"

#include <filesystem>

namespace fp {

Result<Suite> command_suite(const std::string& root_option, const std::vector<std::string>& case_paths) {
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  return find_suite(root_option, ec ? "." : cwd, case_paths);
}

}  // namespace fp
