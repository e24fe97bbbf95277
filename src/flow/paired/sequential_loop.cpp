#include "flow/paired/sequential_loop.h"

#include <algorithm>
#include <cmath>

namespace fp {

bool LoopLook::any_regression() const {
  auto reg = [](const FigureDecision& d) { return d.verdict == TimingVerdict::regression; };
  return std::any_of(gated.begin(), gated.end(), reg) || std::any_of(guards.begin(), guards.end(), reg);
}

bool LoopLook::any_unresolved() const {
  auto open = [](const FigureDecision& d) { return d.verdict == TimingVerdict::unresolved; };
  // A guard holds the blocks only while its estimate is beyond its regression bound, unproven: the
  // gate does not say "no regression" while a guard points at one (a halved decode speed behind a
  // TTFT that decided first).
  auto pointing = [&](const FigureDecision& d) {
    return open(d) && std::isfinite(d.estimate.worse_log) && d.estimate.worse_log > std::log1p(kRegressionShare * d.min_effect);
  };
  return std::any_of(gated.begin(), gated.end(), open) || std::any_of(guards.begin(), guards.end(), pointing);
}

LoopResult run_sequential(int first, int max_blocks, const SequentialSource& source) {
  LoopResult r;
  auto add_until = [&](int n) {
    while (r.blocks < n) {
      if (!source.add_block(r.blocks)) return false;
      ++r.blocks;
    }
    return true;
  };
  for (;;) {
    int next = first_look(first);
    if (r.schedule) {
      const std::optional<int> after = r.schedule->next_after(r.looked_at);
      if (!after) {
        r.end = LoopEnd::schedule_end;
        r.stopped = "the last look (" + std::to_string(r.looked_at) + " blocks, the budget's) did not decide";
        return r;
      }
      next = *after;
      if (source.affordable && next > source.affordable(r.blocks)) {
        r.end = LoopEnd::budget;
        r.stopped = "time budget: the next look (" + std::to_string(next) + " blocks) would pass it";
        return r;
      }
    } else if (next > max_blocks) {
      // Too few blocks for any look (a short A/B, a CTest bound): run them, decide nothing.
      if (!add_until(max_blocks)) {
        r.end = LoopEnd::source_stopped;
        return r;
      }
      r.end = LoopEnd::schedule_end;
      r.stopped =
          "max_blocks (" + std::to_string(max_blocks) + ") is below the first look (" + std::to_string(next) + " blocks): nothing decided";
      return r;
    }
    if (!add_until(next)) {
      r.end = LoopEnd::source_stopped;
      return r;
    }
    if (!r.schedule)
      r.schedule.emplace(first, std::max(r.blocks, source.affordable ? std::min(max_blocks, source.affordable(r.blocks)) : max_blocks));
    r.last = source.look(r.blocks, *r.schedule);
    r.looked_at = r.blocks;
    // A regression first: one decides the case, whatever the undecided figures would show.
    if (r.last.any_regression()) {
      r.end = LoopEnd::regression;
      r.stopped = "a gated figure or a guard regressed after " + std::to_string(r.blocks) + " blocks; the others were not waited for";
      return r;
    }
    if (!r.last.any_unresolved()) {
      r.end = LoopEnd::decided;
      r.stopped = "every gated figure decided after " + std::to_string(r.blocks) + " blocks";
      return r;
    }
  }
}

}  // namespace fp
