#include "flow/paired/alternation.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

namespace fp {
namespace {

// Two threads of `steps[p]` steps each; the order in which their steps ran.
std::vector<int> run_steps(std::array<int, 2> steps) {
  Alternation alt;
  std::mutex m;
  std::vector<int> order;
  auto party = [&](int p) {
    StepTurns& turns = alt.party(p);
    for (int s = 0; s < steps[static_cast<size_t>(p)]; ++s) {
      turns.begin();
      {
        std::lock_guard<std::mutex> lock(m);
        order.push_back(p);
      }
      std::this_thread::yield();
      turns.end();
    }
    turns.leave();
  };
  // The second party starts first: the order must not depend on which thread is scheduled first.
  std::thread t1(party, 1);
  std::thread t0(party, 0);
  t0.join();
  t1.join();
  return order;
}

TEST(Alternation, EveryStepFollowsOneOfTheOther) {
  EXPECT_EQ(run_steps({6, 6}), (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(Alternation, APartyThatLeavesEarlyNeverHoldsTheOther) {
  EXPECT_EQ(run_steps({5, 2}), (std::vector<int>{0, 1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(run_steps({0, 3}), (std::vector<int>{1, 1, 1}));
}

}  // namespace
}  // namespace fp
