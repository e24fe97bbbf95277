// Two launches timed at once, one step each in turn (the side-by-side gate's interleaved blocks).
// Both open in the block's order (first, then second), then their measured steps alternate in
// pairs whose leader alternates: F S | S F | F S | S F ... (ABBA at the request level, so that a
// machine that slows down or speeds up during the block weighs on both arms alike); the closing
// steps follow the same pattern. A party that leaves (done, or failed) is skipped from then on.
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
  // The party whose step comes n-th (0-based) in the pattern, both present.
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
