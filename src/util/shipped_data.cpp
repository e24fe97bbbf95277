#include "util/shipped_data.h"

#include <cstdlib>
#include <filesystem>

namespace fp {

namespace fs = std::filesystem;

namespace {

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

std::string shipped_data_dir() {
  if (const char* env = std::getenv("FLASHPROOF_SHARE_DIR"); env && *env) return env;
  const fs::path dir = executable_dir();
  if (dir.empty()) return "share/flashproof";
  std::error_code ec;
  const fs::path installed = dir.parent_path() / "share" / "flashproof";
  const fs::path build_tree = dir / "share" / "flashproof";
  if (!fs::is_directory(installed, ec) && fs::is_directory(build_tree, ec)) return build_tree.string();
  return installed.string();
}

std::string shipped_probe_library() {
  const fs::path dir = executable_dir();
  if (dir.empty()) return "";
  std::error_code ec;
  for (const fs::path& p : {dir.parent_path() / "lib" / "flashproof" / "libflashproof_probe.so",
                            dir / "src" / "probe" / "libflashproof_probe.so"})
    if (fs::is_regular_file(p, ec)) return p.string();
  return "";
}

}  // namespace fp
