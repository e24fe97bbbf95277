#pragma once

#include <string>

namespace fp {

// flashproof make-model RECIPE.json... [--record] [--root DIR]
// Writes each recipe's seeded GGUF and checks its sha256 against the recipe; --record stores it.
int make_model_command(int argc, char** argv);

// One recipe: writes its GGUF at <root>/<output> (unless the same bytes are there), prints the line
// "NAME: PATH BYTES bytes sha256 SHA" and checks the sha256 (or records it). 0 done, 1 failed (said on stderr).
int make_model_file(const std::string& recipe_path, const std::string& root, bool record);

}  // namespace fp
