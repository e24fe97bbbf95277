#include "util/utf8.h"

#include <algorithm>
#include <mutex>

#include "util/text.h"

namespace fp {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// At s[i]: the length of the valid sequence starting there (1..4), or 0 with *bad set to the length
// of the maximal subpart that is not one (at least 1). Ranges from the Unicode standard, table 3-7.
size_t utf8_sequence_at(std::string_view s, size_t i, size_t* bad) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range; later ones are always 80..BF
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  if (len == 0) {
    *bad = 1;
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    const bool fits = i + k < s.size() && (k == 1 ? b(i + k) >= lo && b(i + k) <= hi : b(i + k) >= 0x80 && b(i + k) <= 0xBF);
    if (!fits) {
      *bad = k;
      return 0;
    }
  }
  return len;
}

std::mutex g_noted_mutex;
std::map<std::string, size_t>& noted() {
  static std::map<std::string, size_t> m;
  return m;
}

}  // namespace

size_t utf8_char_at(std::string_view s, size_t i) {
  size_t bad = 0;
  return i < s.size() ? utf8_sequence_at(s, i, &bad) : 0;
}

size_t utf8_cut(std::string_view s, size_t max_bytes) {
  if (max_bytes >= s.size()) return s.size();
  size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] continues a character
  return n;
}

size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad = 0;
    const size_t n = utf8_sequence_at(s, i, &bad);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string valid_utf8(std::string_view s, size_t* replaced_bytes) {
  size_t replaced = 0;
  const size_t first = invalid_utf8_at(s);
  std::string out;
  if (first == std::string_view::npos) {
    out.assign(s);
  } else {
    out.reserve(s.size() + 16);
    out.append(s.substr(0, first));
    for (size_t i = first; i < s.size();) {
      size_t bad = 0;
      const size_t n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : utf8_sequence_at(s, i, &bad);
      if (n) {
        out.append(s.substr(i, n));
        i += n;
      } else {
        out += kReplacement;
        replaced += bad;
        i += bad;
      }
    }
  }
  if (replaced_bytes) *replaced_bytes = replaced;
  return out;
}

std::string valid_utf8_noted(std::string_view s, const std::string& source) {
  size_t replaced = 0;
  std::string out = valid_utf8(s, &replaced);
  if (replaced) {
    std::lock_guard<std::mutex> lock(g_noted_mutex);
    size_t& n = noted()[valid_utf8(source)];
    n = std::max(n, replaced);
  }
  return out;
}

Result<std::string> read_text_file(const std::string& path) {
  FP_TRY(std::string bytes, read_file(path));
  return valid_utf8_noted(bytes, path);
}

std::map<std::string, size_t> not_utf8_noted() {
  std::lock_guard<std::mutex> lock(g_noted_mutex);
  return noted();
}

void clear_not_utf8_noted() {
  std::lock_guard<std::mutex> lock(g_noted_mutex);
  noted().clear();
}

}  // namespace fp
