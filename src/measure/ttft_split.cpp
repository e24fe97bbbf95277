#include "measure/ttft_split.h"

#include <algorithm>
#include <cmath>

#include "measure/stats.h"
#include "util/format_number.h"

namespace fp {

TtftSplit split_ttft(const std::vector<TtftPart>& parts) {
  TtftSplit s;
  std::vector<double> ttft, prefill, before, tokens_before, outside, prompt, cached;
  for (const TtftPart& p : parts) {
    if (!std::isfinite(p.prefill_ms) || !std::isfinite(p.ttft_ms)) continue;
    ++s.requests;
    ttft.push_back(p.ttft_ms);
    prefill.push_back(p.prefill_ms);
    const bool first_known = std::isfinite(p.decode_before_text_ms);
    const double dec = first_known ? p.decode_before_text_ms : 0;
    if (first_known) {
      ++s.with_first_text_timings;
      before.push_back(p.decode_before_text_ms);
      if (std::isfinite(p.tokens_before_text)) tokens_before.push_back(p.tokens_before_text);
    }
    outside.push_back(p.ttft_ms - p.prefill_ms - dec);
    if (std::isfinite(p.prompt_tokens)) {
      prompt.push_back(p.prompt_tokens);
      s.prompt_tokens_total += p.prompt_tokens;
    }
    if (std::isfinite(p.cached_tokens)) {
      cached.push_back(p.cached_tokens);
      s.cached_tokens_total += p.cached_tokens;
      s.cached_requests += p.cached_tokens > 0;
    }
  }
  auto med = [](const std::vector<double>& v) { return v.empty() ? kNoValue : median(v); };
  s.ttft_ms = med(ttft);
  s.prefill_ms = med(prefill);
  s.decode_before_text_ms = med(before);
  s.tokens_before_text = med(tokens_before);
  s.outside_ms = med(outside);
  s.prompt_tokens = med(prompt);
  s.cached_tokens = med(cached);
  return s;
}

void add_upkeep(TtftSplit& s, const std::string& what, const std::vector<double>& ms) {
  if (ms.empty()) return;
  s.upkeep_what = what;
  s.upkeep_n = ms.size();
  s.upkeep_ms = median(ms);
  s.upkeep_max_ms = *std::max_element(ms.begin(), ms.end());
}

std::string ttft_split_text(const TtftSplit& s) {
  if (s.requests == 0) return "not measured: the runtime reported no prefill time (prompt_ms) with its answers";
  std::string out = "TTFT " + fixed(s.ttft_ms, 3) + " ms (median of " + std::to_string(s.requests) +
                    " requests, each part its own median) = the server's prefill " + fixed(s.prefill_ms, 3) + " ms (prompt_ms; " +
                    fixed(s.prompt_tokens, 0) + " prompt tokens evaluated)";
  if (s.with_first_text_timings > 0)
    out += " + its decode before the first text " + fixed(s.decode_before_text_ms, 3) + " ms (" + fixed(s.tokens_before_text, 0) +
           " tokens generated when the first text was sent)";
  else
    out += " + its decode before the first text: not reported (the runtime sent no timings with its first text)";
  out += " + outside the server's timings " + fixed(s.outside_ms, 3) +
         " ms (HTTP, chat template and tokenizing, waiting for a slot, delivery)";
  if (s.upkeep_n > 0)
    out += ", of which the runtime logged " + s.upkeep_what + " before a task's prompt: median " + fixed(s.upkeep_ms, 3) + " ms, largest " +
           fixed(s.upkeep_max_ms, 3) + " ms over " + std::to_string(s.upkeep_n) + " tasks";
  out += "; prompt tokens served from its cache (cache_n): " + fixed(s.cached_tokens_total, 0) + " of " +
         fixed(s.cached_tokens_total + s.prompt_tokens_total, 0) + " on " + std::to_string(s.cached_requests) + " of " +
         std::to_string(s.requests) + " requests";
  return out;
}

}  // namespace fp
