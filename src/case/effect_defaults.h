// Defaults of the timing policy that both the golden comparison and the side-by-side gate apply:
// the minimum effect of each figure (a fraction, with a floor in the figure's unit: util/min_effect.h)
// and the guards (every figure a user feels that the job does not gate is still failed on a large
// regression). One table, by figure, for every job; the job decides which figures gate
// (flow/passes/figures.h, flow/paired/paired_runner.h) and the guard effect. A case overrides both with
// plan.min_effect and plan.guards (case/case_file.h).
//
// Floors (the figure's unit), and why:
//   ttft_ms, ttft_ms_p95, e2e_ms, server_prompt_ms,          1 ms     the harness's own CPU time per streamed request is
//   cold_first_ttft_ms, cold_first_e2e_ms                             1.0 ms median (bench/README.md section 1): a change
//                                                                     below it is within what the client itself adds
//   itl_ms, tpot_ms, server_tpot_ms                           0.05 ms  the same harness CPU per request spread over the
//                                                                     17 streamed events of a 16-token chat answer
//                                                                     (about 0.06 ms per event)
//   cpu_ms_per_token                                          0.01 ms  a runtime thread's scheduler slice accounting
//                                                                     (schedstat) over a request of a few hundred tokens
//   gpu_kernel_ms, attention_kernel_ms                        0.01 ms  the H200's launch-to-launch kernel-time spread
//                                                                     (0.13% of 7.64 ms: issue 21, CUPTI)
//   gpu_kernel_ms_per_token, attention_kernel_ms_per_token   1e-6 ms  CUPTI's 1 ns timestamps (golden path, per token)
//   cold_ready_ms                                             50 ms    process start and model mapping jitter
//   rates (*_per_s), goodput_share, client_minus_server_*     none     a rate's noise scales with it; its time
//                                                                     counterpart carries the floor
// Relative parts: 5% for every figure (kDefaultMinEffect); the side-by-side gate on CUDA with the
// probe uses 2% for kernel time and 25% for host-clock figures (flow/paired/paired_runner.h gated_figures).
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

#include "util/min_effect.h"

namespace fp {

enum class Job;

inline constexpr double kDefaultGuardEffect = 0.25;

// "c4.ttft_ms" -> "ttft_ms": a concurrency level's figure takes its figure's defaults.
std::string base_figure_name(const std::string& figure);

// The floor of `figure` in its unit (0: none), by the table above; a figure named like a row or
// starting with its name and "_" ("ttft_ms_p95" takes ttft_ms's) takes that row's, the longest wins.
double default_floor(const std::string& figure);

// The job's default minimum effect of `figure`: kDefaultMinEffect with the figure's floor.
MinEffect default_min_effect(Job job, const std::string& figure);

// The figures a user feels: time to first token (median and p95), per-token latency, end-to-end
// latency, and the prompt, decode and total throughput (side-by-side names included).
const std::vector<std::string>& user_felt_figures();
bool is_user_felt(const std::string& figure);  // by base name

// The job's default guard of `figure`: kDefaultGuardEffect with the figure's floor, for a figure a
// user feels; nullopt for any other.
std::optional<MinEffect> default_guard(Job job, const std::string& figure);

// One row of the floor table, for the docs and the tests.
struct FloorRow {
  std::string figure;
  double floor = 0;
  std::string why;
};
const std::vector<FloorRow>& floor_table();

}  // namespace fp
