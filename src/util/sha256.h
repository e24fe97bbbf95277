// SHA-256 of bytes or of a file, as lowercase hex (model files are identified by it).
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace fp {

std::string sha256_hex(std::string_view bytes);
Result<std::string> sha256_file(const std::string& path);

}  // namespace fp
