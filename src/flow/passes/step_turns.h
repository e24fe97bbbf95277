// Two timed passes that share the machine a step at a time (flow/paired/alternation.h): a pass calls
// begin() before each step (its launch through the warm-up, each measured request or concurrent
// round, its closing sample and stop) and end() after it, and leave() once when it returns. Only
// one pass runs a step at any moment, so neither ever competes with the other for the cores.
#pragma once

namespace fp {

class StepTurns {
 public:
  virtual ~StepTurns() = default;
  // Blocks until it is this pass's turn; returns the seconds it waited (time the other pass used,
  // which does not count against this pass's timeout).
  virtual double begin() = 0;
  virtual void end() = 0;
  // No more steps from this pass: the other never waits for it again.
  virtual void leave() = 0;
};

}  // namespace fp
