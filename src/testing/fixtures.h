// Test support (header only, for *_test.cpp): where this checkout's fixtures are. Only the test
// executables define FLASHPROOF_SOURCE_DIR (CMakeLists.txt).
#pragma once

#include <string>

namespace fp::testing {

// fixtures/<rel> in this checkout, e.g. fixture("logs/h200/mid_fa_on.log.gz").
inline std::string fixture(const std::string& rel) { return std::string(FLASHPROOF_SOURCE_DIR) + "/fixtures/" + rel; }

}  // namespace fp::testing
