// What time to first token is made of, per request, from the runtime's own timings: its prefill of
// the prompt tokens it evaluated (llama-server timings.prompt_ms), its decode of the tokens it
// generated before the first text was sent (the first content event's timings: a token whose bytes
// end inside a UTF-8 character is held back, so the first text can need several tokens), and the
// rest, which the server's timings do not count (HTTP, the chat template and tokenizing, waiting for
// a slot behind another request, delivery). Which prompt tokens were served from its prompt cache
// (timings.cache_n) beside them. docs/reports.md, "TTFT split".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fp {

// One request; NaN where the runtime reported nothing.
struct TtftPart {
  double ttft_ms = 0;
  double prefill_ms = 0;             // prompt_ms
  double decode_before_text_ms = 0;  // the first content event's predicted_ms; NaN: not reported
  double tokens_before_text = 0;     // its predicted_n
  double prompt_tokens = 0;          // prompt tokens evaluated (prompt_n)
  double cached_tokens = 0;          // prompt tokens served from the cache (cache_n)
};

struct TtftSplit {
  size_t requests = 0;                 // requests with the runtime's timings
  size_t with_first_text_timings = 0;  // of them, where the first content event carried timings
  // Medians over the requests of each part on its own (their sum need not equal the TTFT median).
  double ttft_ms = 0, prefill_ms = 0, decode_before_text_ms = 0, outside_ms = 0;
  double tokens_before_text = 0, prompt_tokens = 0, cached_tokens = 0;
  size_t cached_requests = 0;  // requests with at least one prompt token from the cache
  double prompt_tokens_total = 0, cached_tokens_total = 0;
  // Work the runtime logs before a task's prompt runs, outside its prefill time (the runtime data's
  // server_timings.log_upkeep: llama-server's "prompt cache update took X ms", the host-RAM prompt
  // cache saving the idle slot's state and looking for a better prompt), from the timed logs: every
  // task of the launches (cold request and warm-up included). upkeep_n 0: none logged.
  std::string upkeep_what;
  size_t upkeep_n = 0;
  double upkeep_ms = 0, upkeep_max_ms = 0;  // median and largest
};

// Adds what the runtime logged as upkeep (milliseconds per task) to the split.
void add_upkeep(TtftSplit& s, const std::string& what, const std::vector<double>& ms);

// The split of the requests that carry the runtime's prefill time; requests == 0 when none does.
TtftSplit split_ttft(const std::vector<TtftPart>& parts);

// "TTFT 12.3 ms (median of 6 requests) = the server's prefill 5.1 ms (prompt_ms; 95 prompt tokens
// evaluated) + its decode before the first text 0.4 ms (1 token) + outside the server's timings
// 6.8 ms (HTTP, template and tokenizing, waiting for a slot, delivery); prompt tokens served from its
// cache (cache_n): 25 of 215 on 3 of 6 requests", or why it is not measured.
std::string ttft_split_text(const TtftSplit& s);

}  // namespace fp
