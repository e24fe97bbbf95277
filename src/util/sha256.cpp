#include "util/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "util/page_cache.h"

namespace fp {
namespace {

using Ctx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Ctx new_ctx() {
  Ctx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::bad_alloc();
  return ctx;
}

std::string hex_of(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(ctx, md, &n);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Ctx ctx = new_ctx();
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return hex_of(ctx.get());
}

Sha256Stream::Sha256Stream() : ctx_(new_ctx().release()) {}
Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }
void Sha256Stream::update(std::string_view bytes) { EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size()); }
std::string Sha256Stream::hex() { return hex_of(static_cast<EVP_MD_CTX*>(ctx_)); }

Result<std::string> sha256_file(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return make_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return make_error(path + ": cannot stat: " + std::strerror(errno));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const PageCacheSnapshot before = PageCacheSnapshot::take(f.fd, size);
  ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  Ctx ctx = new_ctx();
  std::vector<char> buf(4 << 20);
  constexpr uint64_t kDropEvery = 64ull << 20;  // the hash holds at most this much of the file in the cache
  uint64_t pos = 0, dropped_to = 0;
  for (;;) {
    const ssize_t n = ::read(f.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      before.drop_new_pages(f.fd, dropped_to, pos - dropped_to);
      return make_error(path + ": read error at byte " + std::to_string(pos) + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(n));
    pos += static_cast<uint64_t>(n);
    if (pos - dropped_to >= kDropEvery) {
      before.drop_new_pages(f.fd, dropped_to, pos - dropped_to);
      dropped_to = pos;
    }
  }
  // To the end of what was there when the snapshot was taken, read-ahead included.
  before.drop_new_pages(f.fd, dropped_to, std::max(pos, size) - dropped_to);
  return hex_of(ctx.get());
}

}  // namespace fp
