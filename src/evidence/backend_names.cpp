#include "evidence/backend_names.h"

#include <algorithm>
#include <cctype>

#include "util/text.h"

namespace fp {
namespace {

// "CUDA12" -> {"CUDA", 12}; a name without trailing digits -> {name, -1}.
std::pair<std::string, long> stem_and_number(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size() || name.size() - i > 9) return {name, -1};
  return {name.substr(0, i), std::stol(name.substr(i))};
}

}  // namespace

std::string cut_backend_name(const std::string& name, int width) {
  if (width <= 0 || name.size() <= static_cast<size_t>(width)) return name;
  return name.substr(0, static_cast<size_t>(width));
}

void RunBackends::add(const std::string& name) {
  if (!name.empty() && std::find(names_.begin(), names_.end(), name) == names_.end()) names_.push_back(name);
}

BackendName RunBackends::resolve(const std::string& printed, const std::string& split) const {
  // Shorter than the width: printed whole ("  CPU" is CPU).
  if (width_ <= 0 || printed.size() < static_cast<size_t>(width_)) return {printed, {}, ""};
  if (!split.empty() && cut_backend_name(split, width_) == printed) return {split, {}, split == printed ? "" : "split header"};
  std::vector<std::string> fits;
  for (const auto& n : names_)
    if (cut_backend_name(n, width_) == printed) fits.push_back(n);
  if (fits.empty()) return {printed, {}, ""};  // no device list, no split header: as printed
  if (fits.size() == 1) return {fits[0], {}, fits[0] == printed ? "" : "device list"};
  return {"", fits, ""};
}

std::string ambiguous_key(const std::string& printed) { return printed + "?"; }

std::string candidates_text(const std::vector<std::string>& names) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < names.size();) {
    auto [stem, n] = stem_and_number(names[i]);
    size_t j = i + 1;
    while (n >= 0 && j < names.size() && stem_and_number(names[j]) == std::make_pair(stem, n + static_cast<long>(j - i))) ++j;
    if (j - i >= 3) parts.push_back(names[i] + ".." + names[j - 1]);
    else
      for (size_t k = i; k < j; ++k) parts.push_back(names[k]);
    i = j;
  }
  return join(parts, ", ");
}

}  // namespace fp
