// Defaults of the timing policy that both the golden comparison and the side-by-side gate apply:
// the minimum effect of each figure (a fraction, with a floor in the figure's unit: util/min_effect.h)
// and the guards (every figure a user feels that the job does not gate is still failed on a large
// regression). One table, by figure, for every job; the job decides which figures gate
// (flow/passes/figures.h, flow/paired/paired_runner.h) and the guard effect. A case overrides both with
// plan.min_effect and plan.guards (case/case_file.h).
//
// Floors (in the figure's unit) and why: each figure's entry in the figure registry
// (figure/figure_registry.h). Relative parts: 5% for every figure (kDefaultMinEffect); the
// side-by-side gate on CUDA with the probe uses 2% for kernel time and 25% for host-clock figures
// (flow/passes/gated_figures.h).
//
// Guards: kDefaultGuardEffect (25%) with the same floors, for the figures in user_felt_figures()
// that the job does not gate. Why 25%: the largest move of an identical build seen here between
// sittings is +10.9% (itl_ms, one night against a golden, issue 21) and between gate blocks -15%
// (TTFT, one burst block, issue 22); 25% is more than twice the first and clear of the second,
// while a halved decode speed (+100% tpot_ms) or a doubled TTFT is far beyond it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "figure/figure_registry.h"
#include "util/min_effect.h"

namespace fp {

enum class Job;

inline constexpr double kDefaultGuardEffect = 0.25;

// The floor of `figure` in its unit (0: none): its registry entry's (a concurrency level's figure,
// "c4.ttft_ms", its figure's); a name the registry does not hold takes the floor of the longest
// figure whose name and "_" start it ("ttft_ms_x" takes ttft_ms's), else none.
double default_floor(const std::string& figure);

// The job's default minimum effect of `figure`: kDefaultMinEffect with the figure's floor.
MinEffect default_min_effect(Job job, const std::string& figure);

// The figures a user feels (the registry's user_felt): time to first token (median and p95),
// per-token latency, inter-token latency (pooled, and the side-by-side engine's itl_mean_ms),
// end-to-end latency, and the prompt, decode and total throughput.
const std::vector<std::string>& user_felt_figures();
bool is_user_felt(const std::string& figure);  // by base name

// The job's default guard of `figure`: kDefaultGuardEffect with the figure's floor, for a figure a
// user feels; nullopt for any other.
std::optional<MinEffect> default_guard(Job job, const std::string& figure);

// One row of the floor table (the registry's figures that have a floor), for the docs and the tests.
struct FloorRow {
  std::string figure;
  double floor = 0;
  std::string why;
};
const std::vector<FloorRow>& floor_table();

}  // namespace fp
