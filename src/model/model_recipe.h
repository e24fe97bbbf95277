// A model recipe (fixtures/models/<name>.json): the shape and seed of a random-weight llama model,
// where it is written, and the sha256 the generator must reproduce.
#pragma once

#include <cstdint>
#include <string>

#include "model/gguf_writer.h"
#include "model/weight_encoding.h"
#include "util/result.h"

namespace fp {

struct ModelRecipe {
  std::string file;      // the recipe file it came from
  std::string name;
  // general.name in the file; default "flashproof-<name>". Runtimes key workarounds off it (llama.cpp
  // b11669 looks up Phi-3's "<|end|>" token when it reads "phi-3" or "phi3" there, which a random
  // vocabulary lacks, and refuses the file): a recipe named after such a family names its file apart.
  std::string gguf_name;
  uint64_t seed = 0;
  uint32_t n_embd = 0, n_head = 0, n_head_kv = 0, n_layer = 0, n_ff = 0, n_ctx_train = 0;
  uint32_t head_dim = 0;   // 0: n_embd / n_head; else the attention head size on its own (Mistral-Nemo, Gemma)
  uint32_t n_vocab = 0;    // at least the generator's own vocabulary; larger pads it to the deployed size
  WeightType weight_type = WeightType::F16;  // of the matrices ("weight_type": f16, q8_0, q4_0, q4_k)
  std::string copies;      // the public config the shape copies (recipes of deployed shapes)
  std::string output;      // path of the .gguf, relative to the repository root
  std::string sha256;      // recorded by `flashproof make-model --record`; empty until then
  uint32_t head_size() const { return head_dim ? head_dim : (n_head ? n_embd / n_head : 0); }
};

Result<ModelRecipe> load_model_recipe(const std::string& path);

// The GGUF file of a recipe as a plan: metadata and tensors whose rows are computed when written.
// Same recipe, same bytes, whatever the number of threads that write it.
GgufWriter llama_gguf_plan(const ModelRecipe& recipe);
// The whole file in memory (small models, tests).
std::string build_llama_gguf(const ModelRecipe& recipe);
// The type a matrix with rows of `row_length` is stored in: the recipe's weight type when a row holds
// whole blocks of it, else q8_0, else f16.
WeightType matrix_weight_type(const ModelRecipe& recipe, uint64_t row_length);

// The recipe with another head size, the seed and the rest of the shape unchanged (heads, KV heads,
// layers, feed-forward width, context): n_embd = head * n_head, name "<name>-hd<head>", output
// "<output's folder>/matrix/<name>-hd<head>.gguf", no sha256 recorded. An error names the recipe and
// the head size when the shape cannot be built (odd: RoPE rotates pairs; below 8; n_embd too large).
Result<ModelRecipe> recipe_with_head_size(const ModelRecipe& recipe, uint32_t head);

// The recipe with other weights: name "<name>-<type>", output "<output stem>-<type>.gguf", no
// sha256 recorded; the seed and shape unchanged (the same values before they are encoded).
ModelRecipe recipe_with_weight_type(const ModelRecipe& recipe, WeightType type);

// Streams the recipe's GGUF to `path` (folders created; a temporary file renamed into place) with
// `threads` workers (0: one per core), in bounded memory (gguf_writer.h), hashing while it writes;
// a file already there whose sha256 is the recipe's recorded one is kept. Returns the sha256.
Result<std::string> write_recipe_model(const ModelRecipe& recipe, const std::string& path, unsigned threads = 0);

}  // namespace fp
