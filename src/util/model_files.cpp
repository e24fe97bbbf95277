#include "util/model_files.h"

#include <cstdio>
#include <filesystem>

#include "util/regex.h"

namespace fp {
namespace {

namespace fs = std::filesystem;

// llama.cpp's split_path format: "%s-%05d-of-%05d.gguf".
const Regex& split_pattern() {
  static const Regex re(R"((.*)-([0-9]{5})-of-([0-9]{5})\.gguf)");
  return re;
}

std::string shard_path(const std::string& stem, int index, int count) {
  char tail[32];
  std::snprintf(tail, sizeof tail, "-%05d-of-%05d.gguf", index, count);
  return stem + tail;
}

}  // namespace

SplitName split_name(const std::string& path) {
  RegexMatch m;
  if (!regex_match(path, split_pattern(), m)) return {};
  const int index = std::stoi(m.str(2)), count = std::stoi(m.str(3));
  if (index < 1 || count < 1 || index > count) return {};
  return {index, count};
}

Result<std::vector<std::string>> model_files(const std::string& path) {
  const SplitName s = split_name(path);
  if (s.count == 0) return std::vector<std::string>{path};
  RegexMatch m;
  regex_match(path, split_pattern(), m);
  const std::string stem = m.str(1);
  if (s.index != 1)
    return make_error(path + ": shard " + std::to_string(s.index) + " of a split GGUF; name its first shard, " +
                      shard_path(stem, 1, s.count) + " (the runtime loads the others from it)");
  std::vector<std::string> files;
  for (int i = 1; i <= s.count; ++i) {
    files.push_back(shard_path(stem, i, s.count));
    std::error_code ec;
    if (!fs::is_regular_file(files.back(), ec))
      return make_error(files.back() + ": shard " + std::to_string(i) + " of " + std::to_string(s.count) + " of " + path +
                        " is missing (a split GGUF needs every shard beside the first)");
  }
  return files;
}

}  // namespace fp
