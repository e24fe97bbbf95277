// The case's prompts at their asked length in tokens (shape.prompt_tokens), fitted against the
// running runtime: counted through its tokenizer endpoint where the runtime data names one (the
// count the runtime will report as usage.prompt_tokens), else estimated, and the result says which.
// The evidence pass fits them once; the passes after it reuse them (CaseContext::prompts_fitted).
#pragma once

#include <string>
#include <vector>

#include "case/prompt_set.h"
#include "flow/passes/case_context.h"

namespace fp {

struct FittedPrompts {
  std::vector<Prompt> prompts;
  std::string counted_by;   // runtime/tokenizer.h token_count_method
  bool estimated = false;   // no tokenizer endpoint: counted by the estimate
};

// ctx.prompts as they are when the case asks for no token length or they are fitted already;
// otherwise each prompt fitted to shape.prompt_tokens (case/prompt_fit.h), filler seeded by the
// case's seed and the prompt's position. `base_url`: the running runtime.
Result<FittedPrompts> fit_case_prompts(const CaseContext& ctx, const std::string& base_url);

// After a pass fitted the prompts: the context keeps them, so later passes send the same prompts
// without asking the tokenizer again.
void adopt_fitted_prompts(CaseContext& ctx, const FittedPrompts& fitted);

}  // namespace fp
