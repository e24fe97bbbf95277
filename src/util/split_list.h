// Comma-separated lists as command-line options and data fields write them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fp {

// Which items a split keeps (always trimmed).
enum class ListItems {
  All,              // "a, b,,c" -> {"a", "b", "", "c"}; "" -> {""}: empty ones kept for the caller to reject
  NonEmpty,         // "a, b,,c" -> {"a", "b", "c"}; "" -> {}
  NonEmptyUnique,   // "a, b,a" -> {"a", "b"}: also a repeated item once, at its first place
};

// The items of `text` split at `sep` and trimmed, kept as `keep` says.
std::vector<std::string> split_list(std::string_view text, char sep = ',', ListItems keep = ListItems::All);

}  // namespace fp
