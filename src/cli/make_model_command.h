#pragma once

#include <optional>
#include <string>

#include "model/weight_encoding.h"

namespace fp {

// flashproof make-model RECIPE.json... [--record] [--weight-type TYPE] [--threads N] [--root DIR]
// Writes each recipe's seeded GGUF and checks its sha256 against the recipe; --record stores it.
int make_model_command(int argc, char** argv);

// One recipe (with other weights when `weight_type` is set): writes its GGUF at <root>/<output>
// (unless the recorded bytes are there), prints "NAME: PATH BYTES bytes sha256 SHA (S s, R MB/s, peak RSS M MiB)" and
// checks the sha256 (or records it). 0 done, 1 failed (said on stderr).
int make_model_file(const std::string& recipe_path, const std::string& root, bool record,
                    const std::optional<WeightType>& weight_type = std::nullopt, unsigned threads = 0);

}  // namespace fp
