// Whether the filesystem holding a file is full: a runtime writes its log through its own stdout and
// stderr, and a write that fails there is lost without a word to flashproof; what is left of the log
// then decides nothing (issue: a log cut short by a full disk was read as a verdict).
#pragma once

#include <cstdint>
#include <string>

namespace fp {

// Below this many bytes free, the filesystem counts as full: less than one more burst of log lines, and
// more than the last block or page a write that failed can leave unused.
inline constexpr uint64_t kFullDiskBytes = 16 * 1024;

// "" when the filesystem holding `path` (a file or a folder) has kFullDiskBytes or more free, or cannot
// be asked; else "no space left on the filesystem of PATH (N bytes free)". Free means what this user
// may still write (root's reserve counts for root).
std::string disk_full_note(const std::string& path);

}  // namespace fp
