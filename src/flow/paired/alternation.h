// Two launches timed at once, one step each in turn (the side-by-side gate's interleaved blocks).
// Both open in the block's order (first, then second), then their steps strictly alternate: F S F S
// ... so that every measured request of either build follows a step of the other, and both find the
// caches as the other left them. (Pairs whose leader alternates, F S | S F | ..., were tried first:
// then every other request of a build follows one of its own, with warm caches, and with an odd
// number of rounds a prompt's median came from cold requests in one build and warm ones in the other;
// the tiny cases' TTFT, 3 ms warm and 6 ms cold, spread far more than their intervals allowed.) The
// second launch always going second within a pair is evened out by the blocks' random order. A
// party that leaves (done, or failed) is skipped from then on.
#pragma once

#include <array>
#include <condition_variable>
#include <mutex>

#include "flow/passes/step_turns.h"

namespace fp {

class Alternation {
 public:
  Alternation();
  // Party 0 opens first (the block's first launch), party 1 second.
  StepTurns& party(int p) { return parties_[static_cast<size_t>(p)]; }
  // The party whose step comes n-th (0-based), both present: n % 2.
  static int nth(long n);

 private:
  class Party : public StepTurns {
   public:
    Alternation* alt = nullptr;
    int index = 0;
    double begin() override;
    void end() override;
    void leave() override;
  };
  void advance();  // locked: the next step whose party is still there
  std::mutex m_;
  std::condition_variable cv_;
  long step_ = 0;
  std::array<bool, 2> left_{false, false};
  std::array<Party, 2> parties_;
};

}  // namespace fp
