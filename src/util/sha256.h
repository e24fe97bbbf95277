// SHA-256 of bytes or of a file, as lowercase hex (model files are identified by it). OpenSSL's
// EVP implementation (libcrypto): it uses the CPU's SHA extensions where there are any.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace fp {

std::string sha256_hex(std::string_view bytes);

// SHA-256 of bytes fed in pieces (a file hashed while it is written).
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void update(std::string_view bytes);
  std::string hex();  // the digest of everything fed; call once

 private:
  void* ctx_;  // EVP_MD_CTX
};

// Reads the file once, start to end. Leaves the page cache as it found it (util/page_cache.h): the
// pages of the file that were not resident before are dropped again as the hash passes them, so that
// hashing a model neither warms nor evicts it before the runtime loads it.
Result<std::string> sha256_file(const std::string& path);

}  // namespace fp
