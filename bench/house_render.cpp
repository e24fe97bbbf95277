// The writers on recorded inputs, for the before/after check of a refactoring that must not change
// any output (bench/house_identity.sh): each result.json read and written again as result.txt and
// result.json, each golden file read and written again. Prints everything on stdout, one section
// per input; an input that cannot be read prints its error in its section.
// usage: house_render FILE...  (result.json files and golden <case>.json files; the kind by name)
#include <cstdio>
#include <iostream>
#include <string>

#include "golden/golden_file.h"
#include "report/result_file.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    std::cout << "==== " << path << "\n";
    const bool result = path.size() >= 11 && path.compare(path.size() - 11, 11, "result.json") == 0;
    if (result) {
      auto r = fp::load_result_json(path);
      if (!r) {
        std::cout << "error: " << r.error().message << "\n";
        continue;
      }
      std::cout << "---- result.txt\n" << fp::result_to_text(*r) << "---- result.json\n" << fp::result_to_json(*r).dump(2) << "\n";
    } else {
      auto g = fp::load_golden(path);
      if (!g) {
        std::cout << "error: " << g.error().message << "\n";
        continue;
      }
      std::cout << "---- golden\n" << fp::golden_to_json(*g) << "\n";
    }
  }
  return 0;
}
