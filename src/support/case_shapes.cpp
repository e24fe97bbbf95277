#include "support/case_shapes.h"

#include <algorithm>
#include <cstdlib>

#include "util/text.h"

namespace fp {

Result<CaseQuestion> case_question(const CaseContext& ctx, const SupportRules& rules, const KvCacheTypes& kv,
                                   const LaunchLine& line) {
  const Case& c = ctx.c;
  CaseQuestion out;
  auto meta = read_gguf_metadata(ctx.model_path);
  if (!meta) return make_error(c.file + ": its model cannot be asked about: " + meta.error().message);
  auto shape = shape_of_gguf(*meta);
  if (!shape) return make_error(c.file + ": " + shape.error().message);
  out.shape = *shape;
  out.shape.name = c.name;
  out.shape.source = "case " + c.file + ": " + out.shape.source;
  out.kv = kv_pair_of(c.launch.argv, kv);
  out.env = c.launch.env;

  // The context: the case's shape.context where the launch line has the {context} placeholder, a
  // number written there, or the model's trained context for the runtime's "from the model" values.
  std::string context = line.context_default;
  std::vector<std::string> context_options;
  if (auto it = line.placeholders.find("context"); it != line.placeholders.end()) context_options = it->second;
  if (auto o = find_option(c.launch.argv, context_options)) context = o->value;
  if (context == "{context}") context = std::to_string(c.shape.context);
  if (std::find(line.context_from_model.begin(), line.context_from_model.end(), context) != line.context_from_model.end()) {
    if (out.shape.trained_context <= 0)
      return make_error(c.file + ": the launch line takes the context from the model, whose header does not say it");
    out.notes.push_back(c.name + ": context " + std::to_string(out.shape.trained_context) + ", the model's trained context");
    context = std::to_string(out.shape.trained_context);
  }
  char* end = nullptr;
  const long n_ctx = std::strtol(context.c_str(), &end, 10);
  if (context.empty() || *end || n_ctx < 1)
    return make_error(c.file + ": launch line: context " + quote(context) + " is not a whole number >= 1");

  auto batch = launch_batch(c.launch.argv, rules);
  if (!batch) return make_error(c.file + ": " + batch.error().message);
  out.kv_length = static_cast<int>(n_ctx);
  out.batches = {{1, 1}, {batch->ubatch, 1}};
  if (batch->slots > 1) {
    if (batch->separate_streams) {
      // llama.cpp: each slot's own KV stream holds n_ctx / n_seq_max cells.
      out.kv_length = static_cast<int>(n_ctx / batch->slots);
      out.batches.push_back({batch->slots, batch->slots});
      out.notes.push_back(c.name + ": " + std::to_string(batch->slots) + " slots, each its own KV stream of " +
                          std::to_string(out.kv_length) + " cells (the decode step of every slot: " +
                          std::to_string(batch->slots) + " tokens in " + std::to_string(batch->slots) + " streams)");
    } else {
      out.batches.push_back({batch->slots, 1});
      out.notes.push_back(c.name + ": " + std::to_string(batch->slots) + " slots sharing one KV buffer");
    }
  }
  std::sort(out.batches.begin(), out.batches.end(), [](const StepBatch& a, const StepBatch& b) {
    return a.tokens != b.tokens ? a.tokens < b.tokens : a.streams < b.streams;
  });
  out.batches.erase(std::unique(out.batches.begin(), out.batches.end()), out.batches.end());
  return out;
}

}  // namespace fp
