// The verdict in words: the one-paragraph explanation decide() stores (evidence/verdict.h
// format_verdict is defined beside it, in verdict_text.cpp; backends_text in evidence/verdict_types.h).
#pragma once

#include <string>

#include "evidence/verdict.h"

namespace fp::verdict_detail {

// Each level's summary or why it is unavailable, the graph splits the log counted, the conclusion,
// and the disagreement when levels disagree.
std::string explain(const Verdict& v, const LogScan* log);

}  // namespace fp::verdict_detail
