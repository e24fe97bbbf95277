#include "util/disk_space.h"

#include <sys/statvfs.h>
#include <unistd.h>

namespace fp {

std::string disk_full_note(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return "";
  const uint64_t blocks = ::geteuid() == 0 ? st.f_bfree : st.f_bavail;
  const uint64_t free_bytes = blocks * static_cast<uint64_t>(st.f_frsize);
  if (free_bytes >= kFullDiskBytes) return "";
  return "no space left on the filesystem of " + path + " (" + std::to_string(free_bytes) + " bytes free)";
}

}  // namespace fp
