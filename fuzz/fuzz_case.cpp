// Fuzzes the case loader (parse_case_text, what load_case runs on a file's text). The case's path
// takes its stem from the input's "name" when that is a plain name, so that inputs get past the
// name check into the field checks; the suite is this checkout (fixtures exist there).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "case/case_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string stem = "case";
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("name") && j["name"].is_string()) {
    std::string name = j["name"].get<std::string>();
    if (!name.empty() && name.size() < 100 && name.find_first_of("/\\") == std::string::npos && name[0] != '.')
      stem = name;
  }
  static const fp::Suite suite = *fp::load_suite(FLASHPROOF_SOURCE_DIR);
  auto c = fp::parse_case_text(text, "cases/" + stem + ".json", suite);
  if (c) {
    // A loaded case holds what the loader promises.
    const fp::Case& k = *c;
    if (k.launch.argv.empty() || k.launch.argv[0] != "{runtime}") __builtin_trap();
    if (k.flag.on == k.flag.off) __builtin_trap();
    if (k.plan.repetitions < 1 || k.plan.ready_timeout_s >= k.plan.timeout_s) __builtin_trap();
  } else if (c.error().message.empty()) {
    __builtin_trap();  // every error says something
  }
  return 0;
}
