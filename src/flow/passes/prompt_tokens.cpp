#include "flow/passes/prompt_tokens.h"

#include <algorithm>

#include "case/prompt_fit.h"
#include "runtime/tokenizer.h"

namespace fp {

Result<FittedPrompts> fit_case_prompts(const CaseContext& ctx, const std::string& base_url) {
  const Case& c = ctx.c;
  const bool chat = c.job != Job::Completion;  // flow/passes/request_builder.h: which endpoint the job uses
  FittedPrompts out;
  out.prompts = ctx.prompts;
  out.counted_by = ctx.prompts_counted_by;
  out.estimated = !ctx.adapter.tokenizer.has_value();
  if (c.shape.prompt_tokens <= 0 || ctx.prompts_fitted) return out;
  out.counted_by = token_count_method(ctx.adapter, chat);
  const double timeout_s = std::min(30.0, c.plan.stall_timeout_s);
  TokenCounter count = [&](const Prompt& p) -> Result<int> {
    if (!ctx.adapter.tokenizer) return estimate_prompt_tokens(p);
    return count_prompt_tokens(*ctx.adapter.tokenizer, base_url, p, chat, timeout_s, ctx.request_headers);
  };
  for (size_t i = 0; i < out.prompts.size(); ++i) {
    auto fitted = fit_prompt(ctx.prompts[i], c.shape.prompt_tokens, count, filler_seed(c.seed, i));
    if (!fitted) return make_error(c.file + ": field \"shape.prompt_tokens\": " + fitted.error().message);
    out.prompts[i] = *fitted;
  }
  return out;
}

void adopt_fitted_prompts(CaseContext& ctx, const FittedPrompts& fitted) {
  if (ctx.c.shape.prompt_tokens <= 0) return;
  ctx.prompts = fitted.prompts;
  ctx.prompts_counted_by = fitted.counted_by;
  ctx.prompts_fitted = true;
}

}  // namespace fp
