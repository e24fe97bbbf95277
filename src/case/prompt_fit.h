// Prompts of an exact length in tokens (shape.prompt_tokens): seeded filler text is added before a
// prompt's last user message until the runtime counts exactly the asked number of prompt tokens.
// The counting is passed in (flow/passes/prompt_tokens.h asks the runtime's tokenizer endpoint, or
// estimates), so this part knows no runtime.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "case/prompt_set.h"
#include "util/result.h"

namespace fp {

// The prompt tokens of one request as the runtime counts them (chat template included).
using TokenCounter = std::function<Result<int>(const Prompt&)>;

// `words` seeded pseudo-words (two or three syllables each), space-separated: the same text for
// the same seed on every platform and runtime. vLLM's random dataset draws token ids instead; words
// keep the text the same whatever the tokenizer.
std::string filler_text(uint64_t seed, size_t words);

// The seed of the filler of prompt `index` of a case: each prompt gets its own text (no shared
// prefix a runtime's prefix cache could reuse).
uint64_t filler_seed(int case_seed, size_t index);

// `count` synthetic prompts, ids synthetic-01, synthetic-02, ...: one empty user message each, for
// fit_prompt to fill.
std::vector<Prompt> synthetic_prompts(int count);

// `base` with filler (seed) before its last user message's content, so that `count` gives exactly
// `tokens`; an empty last message becomes filler alone. Searches the number of filler words, then
// adds single characters where a whole word overshoots. Errors (naming the prompt): the prompt
// alone already counts more; the counter fails; no exact fit (with the nearest counts found).
Result<Prompt> fit_prompt(const Prompt& base, int tokens, const TokenCounter& count, uint64_t seed);

}  // namespace fp
