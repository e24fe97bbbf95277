#include "util/split_list.h"

#include <algorithm>

#include "util/text.h"

namespace fp {

std::vector<std::string> split_list(std::string_view text, char sep, ListItems keep) {
  std::vector<std::string> items;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(sep, start);
    std::string item = trim(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    const bool dropped = keep != ListItems::All && item.empty();
    const bool repeated =
        keep == ListItems::NonEmptyUnique && std::find(items.begin(), items.end(), item) != items.end();
    if (!dropped && !repeated) items.push_back(std::move(item));
    if (end == std::string_view::npos) return items;
    start = end + 1;
  }
}

}  // namespace fp
