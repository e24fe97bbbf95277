#include "util/shell_word.h"

#include <cctype>

namespace fp {

std::string shell_word(const std::string& s) {
  bool bare = !s.empty();
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("/._-+=:,@%").find(c) == std::string::npos) bare = false;
  if (bare) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace fp
