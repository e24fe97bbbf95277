// Fuzzes the golden file parser. A golden it accepts must survive a round trip: written back with
// golden_to_json and parsed again, it is valid and writes the same text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "golden/golden_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto g = fp::parse_golden(text, "fuzz.json");
  if (!g) {
    if (g.error().message.empty()) __builtin_trap();
    return 0;
  }
  if (!fp::validate_golden(*g, "fuzz.json")) __builtin_trap();
  const std::string once = fp::golden_to_json(*g);
  auto again = fp::parse_golden(once, "roundtrip.json");
  if (!again) __builtin_trap();
  if (fp::golden_to_json(*again) != once) __builtin_trap();
  return 0;
}
