// Comma-separated lists as command-line options and data fields write them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fp {

// "a, b,,c" -> {"a", "b", "", "c"}: items split at `sep` and trimmed, empty ones kept (for the caller
// to reject); "" -> {""}.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

}  // namespace fp
