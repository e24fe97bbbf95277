// The pre-OpenSSL hand-written SHA-256 of a file (1 MiB ifstream reads), for bench/hash_bench only.
#pragma once

#include <string>

namespace fp::bench {

// Lowercase hex, or "" when the file cannot be read.
std::string handwritten_sha256_file(const std::string& path);

}  // namespace fp::bench
