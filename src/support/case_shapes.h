// A case as `flashproof support` asks about it: its model's attention shape (the GGUF header), the
// K/V types, context, ubatch and slots of its launch line, the env it launches with, its runtime.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flow/passes/case_context.h"
#include "runtime/kv_cache_types.h"
#include "runtime/launch_line.h"
#include "support/attention_shape.h"
#include "support/support_plan.h"
#include "support/support_rules.h"

namespace fp {

struct CaseQuestion {
  AttentionShape shape;
  KvPair kv;
  int kv_length = 0;               // cells attended per stream: the context, or each slot's share
  std::vector<StepBatch> batches;  // decode (1), its ubatch, and its slots' decode step when > 1 slot
  std::map<std::string, std::string> env;
  std::vector<std::string> notes;  // how each figure was read from the case
};

// From a resolved case (flow/passes/case_context.h): errors name the case file and what is missing
// (a model that is not GGUF, a launch option with a bad value).
Result<CaseQuestion> case_question(const CaseContext& ctx, const SupportRules& rules, const KvCacheTypes& kv,
                                   const LaunchLine& line);

}  // namespace fp
