// Simulated side-by-side runs through the gate's one loop (flow/paired/sequential_loop.h): a model of
// the machine draws each launch's values, the loop looks and stops as the runner does. The error
// rates and blocks to a decision of docs/gate-design.md come from here (gate_simulation_test.cpp
// asserts them, bench/gate_simulation prints the table).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "measure/paired_stats.h"

namespace fp {

// A machine: every launch has its own speed (log-normal, sd `launch_sd`), every request its own noise
// (`request_sd`), B is slower by `shift`; `prompts` prompts, `rounds` repetitions each (a launch's
// unit per prompt is their median). A launch bursts with probability `burst_rate`: every request of
// it slower by a factor drawn from [1 + burst_lo, 1 + burst_hi] (the whole machine slow). A noisy
// spell: with probability `spell_rate` a whole trial runs at launch sd `spell_launch_sd`.
struct SimMachine {
  double launch_sd = 0.02, request_sd = 0.03, shift = 0.0;
  int rounds = 2;
  double burst_rate = 0, burst_lo = 0, burst_hi = 0;
  int prompts = 3;
  double spell_rate = 0, spell_launch_sd = 0;
};

// Draws one block's units into each gated figure (FigureInput::units): block `block`, A first where
// `a_first`.
using DrawBlock = std::function<void(std::mt19937_64& rng, int block, bool a_first, std::vector<FigureInput>& gated)>;

struct SimRates {
  int trials = 0;
  double regression = 0, no_regression = 0, unresolved = 0;
  double mean_blocks = 0;  // blocks run to the outcome
  double p95_blocks = 0;   // the 95th percentile of them
};

// `trials` runs of the gate's loop over `gated` (their units empty, drawn by `draw`), the looks of a
// plan with first look after 4 and max_blocks 200, the budget `budget_blocks`; block orders as the
// runner draws them (flow/paired/paired_runner.h block_orders). Reproducible from `seed`.
SimRates simulate_gate(const std::vector<FigureInput>& gated, const DrawBlock& draw, int trials, std::uint64_t seed,
                       int budget_blocks = kDefaultBudgetBlocks);

// One figure (ttft_ms, lower is better, at `min_effect`) on a SimMachine.
SimRates simulate_machine(const SimMachine& m, double min_effect, int trials, std::uint64_t seed, int budget_blocks = kDefaultBudgetBlocks);

// "regression 0.003, no regression 0.990, unresolved 0.007, blocks mean 9.1 p95 16".
std::string rates_text(const SimRates& r);

// One machine and case the gate's rates are checked on: its gated figures (the first one carries
// the true change), its budget in blocks, and how a block is drawn where arm B is slower by `shift`
// in the first figure.
struct SimScenario {
  std::string name;
  std::string source;  // where its spread and bursts were measured
  std::vector<FigureInput> gated;
  int budget_blocks = kDefaultBudgetBlocks;
  std::function<DrawBlock(double shift)> draw;
  double min_effect() const { return gated.front().min_effect; }
};

// The scenarios of docs/gate-design.md "Error rates": the machines and cases measured here and on
// the H200 (each one's source says where). `fixtures_dir`: the repository's fixtures/ (the recorded
// launches one scenario resamples); an unreadable file leaves that scenario out.
std::vector<SimScenario> gate_scenarios(const std::string& fixtures_dir);

}  // namespace fp
