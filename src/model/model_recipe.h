// A model recipe (fixtures/models/<name>.json): the shape and seed of a random-weight llama model,
// where it is written, and the sha256 the generator must reproduce.
#pragma once

#include <cstdint>
#include <string>

#include "util/result.h"

namespace fp {

struct ModelRecipe {
  std::string file;      // the recipe file it came from
  std::string name;
  uint64_t seed = 0;
  uint32_t n_embd = 0, n_head = 0, n_head_kv = 0, n_layer = 0, n_ff = 0, n_ctx_train = 0;
  std::string output;    // path of the .gguf, relative to the repository root
  std::string sha256;    // recorded by `flashproof make-model --record`; empty until then
  uint32_t head_size() const { return n_head ? n_embd / n_head : 0; }
};

Result<ModelRecipe> load_model_recipe(const std::string& path);

// The GGUF bytes for a recipe: same recipe, same bytes.
std::string build_llama_gguf(const ModelRecipe& recipe);

// The recipe with another head size, the seed and the rest of the shape unchanged (heads, KV heads,
// layers, feed-forward width, context): n_embd = head * n_head, name "<name>-hd<head>", output
// "<output's folder>/matrix/<name>-hd<head>.gguf", no sha256 recorded. An error names the recipe and
// the head size when the shape cannot be built (odd: RoPE rotates pairs; below 8; n_embd too large).
Result<ModelRecipe> recipe_with_head_size(const ModelRecipe& recipe, uint32_t head);

// Writes the recipe's GGUF to `path` (folders created) unless a file with the same bytes is there
// already; returns the sha256 of the bytes.
Result<std::string> write_recipe_model(const ModelRecipe& recipe, const std::string& path);

}  // namespace fp
