// The sha256 of large files (models of tens of gigabytes), computed once: cached by path, size,
// modification time (ns), inode and device in a small JSON file, so later runs cost a stat().
// Cache file: $FLASHPROOF_HASH_CACHE, else $XDG_CACHE_HOME/flashproof/sha256.json, else
// ~/.cache/flashproof/sha256.json. Written atomically, merged with what other processes wrote
// meanwhile; a corrupt or unreadable cache is ignored with a warning (the hash is then computed).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "util/result.h"

namespace fp {

struct FileHash {
  std::string path;      // as asked
  std::string sha256;
  uint64_t size = 0;
  bool from_cache = false;  // false: the file was read (and left out of the page cache again)
};

// The cache file this process uses (see above); "" when neither variable nor HOME is set (no cache).
std::string default_hash_cache_file();

// The file's sha256: from `cache_file` when an entry matches the file's path (canonical), size,
// mtime (ns), inode and device; else (or with `rehash`) read with util/sha256.h sha256_file and
// stored (not when the file was modified in the last 2 s: too recent to tell a rewrite apart by its
// modification time). Warnings (corrupt cache, cannot write it, file changed while hashed) and a note before a
// long read go to `notes`. An empty `cache_file` hashes without caching.
Result<FileHash> cached_sha256_file(const std::string& path, const std::string& cache_file, bool rehash,
                                    std::ostream& notes);
// The same with default_hash_cache_file() and notes to stderr.
Result<FileHash> cached_sha256_file(const std::string& path, bool rehash);

}  // namespace fp
