#include "util/split_list.h"

#include "util/text.h"

namespace fp {

std::vector<std::string> split_list(std::string_view text, char sep) {
  std::vector<std::string> items;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(sep, start);
    items.push_back(trim(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) return items;
    start = end + 1;
  }
}

}  // namespace fp
