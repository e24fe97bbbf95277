// The side-by-side gate's one sequential loop (docs/gate-design.md): blocks are added up to the next
// look, every figure is decided there, and the loop stops at the first look where a gated figure or a
// guard regressed, or every gated figure is decided; or where the next look's blocks would pass the
// budget, the schedule ends, or no block could be added. The looks (measure/paired_stats.h
// LookSchedule) are fixed at the first one: from it to the blocks the budget allows then. The runner (launches), gate_replay (a recorded gate.json), the simulations and
// bench/ drive it, each with its own source of blocks.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "measure/paired_stats.h"

namespace fp {

// What one look decided.
struct LoopLook {
  std::vector<FigureDecision> gated;   // the gated figures (one Holm family)
  std::vector<FigureDecision> guards;  // the guards (a family of their own): a regression fails
  bool any_regression() const;
  // A gated figure unresolved, or a guard unresolved with its estimate beyond its regression bound.
  bool any_unresolved() const;
};

struct SequentialSource {
  // Adds block `block` (0-based); false where it could not be (a launch failed, the recording ran
  // out, an interrupt): the loop stops, and the source says why.
  std::function<bool(int block)> add_block;
  // Decides every figure on the blocks so far.
  std::function<LoopLook(int blocks, const LookSchedule& schedule)> look;
  // Blocks in all the budget allows, `blocks` run so far: asked at the first look (the schedule ends
  // there) and before the blocks of each further look. Empty: no budget but max_blocks.
  std::function<int(int blocks)> affordable;
};

enum class LoopEnd { regression, decided, budget, schedule_end, source_stopped };

struct LoopResult {
  LoopEnd end = LoopEnd::schedule_end;
  int blocks = 0;                        // blocks added
  int looked_at = 0;                     // blocks of the last look (0: none)
  std::optional<LookSchedule> schedule;  // fixed at the first look
  LoopLook last;                         // that look's decisions
  std::string stopped;                   // why the loop stopped, in words
};

// `first`: the blocks before the first look (measure/paired_stats.h first_look); `max_blocks`: the
// schedule never runs past it (below the first look: max_blocks blocks run, none looked at).
LoopResult run_sequential(int first, int max_blocks, const SequentialSource& source);

}  // namespace fp
