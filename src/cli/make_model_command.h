#pragma once

namespace fp {

// flashproof make-model RECIPE.json... [--record] [--root DIR]
// Writes each recipe's seeded GGUF and checks its sha256 against the recipe; --record stores it.
int make_model_command(int argc, char** argv);

}  // namespace fp
