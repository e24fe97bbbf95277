// The attention shape of a model, as the fused attention node sees it: heads, KV heads, the K and V
// head sizes, whether V is a view of K (MLA's K-only cache), the logit softcap. From a public config
// shipped as data (fixtures/models/public/configs.json), a model recipe, or a GGUF header read the
// way llama.cpp reads it. What `flashproof support` asks the backends about.
#pragma once

#include <string>
#include <vector>

#include "model/gguf_reader.h"
#include "model/model_recipe.h"
#include "util/result.h"

namespace fp {

struct AttentionShape {
  std::string name;          // "Llama-3.1-8B", a recipe's name, a model file's name
  std::string source;        // where it was read: "<file>: <public config>", "recipe <file>", "GGUF header of <file>"
  std::string architecture;  // llama, gemma2, deepseek2, ...
  int layers = 0, n_embd = 0, n_ff = 0, trained_context = 0;  // for the reader; the node does not use them
  int n_head = 0, n_head_kv = 0, head_k = 0, head_v = 0;
  bool v_is_k_view = false;  // MLA (DeepSeek): a K-only cache, V the first head_v values of each K row
  double scale = 0;          // the node's KQ scale: the config's, else 1/sqrt(head_k)
  double logit_softcap = 0;  // Gemma 2: 50
  double max_bias = 0;       // ALiBi; 0 for every shape here

  // "128/128" or "576/512 (MLA)".
  std::string head_label() const;
  // "32/8" (heads / KV heads).
  std::string heads_label() const;
};

// Ok when llama.cpp could build the node: sizes >= 1, heads a multiple of KV heads, MLA's V no wider
// than K. The error names the shape, its source and the field.
Status check_shape(const AttentionShape& s);

// The public configs file: {"configs": [{"name", "config", "architecture", "layers", "n_embd",
// "n_head", "n_head_kv", "head_k", "head_v", "n_ff", "trained_context", "kv_cache": "k_and_v" |
// "k_only", "scale", "logit_softcap", "comment"}]}. Errors name the file, the entry and the field.
Result<std::vector<AttentionShape>> parse_public_shapes(const std::string& text, const std::string& path);
Result<std::vector<AttentionShape>> load_public_shapes(const std::string& path);
// fixtures/models/public/configs.json as flashproof ships it (util/shipped_data.h: models/public/).
std::string shipped_public_shapes_path();
// Those of `all` named in `names` (a comma list), in the list's order; an error names an unknown
// one and lists the valid names.
Result<std::vector<AttentionShape>> select_shapes(const std::vector<AttentionShape>& all, const std::string& names,
                                                  const std::string& path);

// A recipe's shape (the generator writes plain llama attention: head size n_embd / n_head).
AttentionShape shape_of_recipe(const ModelRecipe& r);
// A GGUF header's shape as llama.cpp builds it: <arch>.attention.head_count(_kv), key_length /
// value_length; with <arch>.attention.kv_lora_rank (DeepSeek's MLA) K is kv_lora_rank +
// <arch>.rope.dimension_count wide, V kv_lora_rank, one KV head, V a view of K; the logit softcap
// from <arch>.attn_logit_softcapping.
Result<AttentionShape> shape_of_gguf(const GgufMetadata& meta);

}  // namespace fp
