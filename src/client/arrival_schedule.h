// When each request of a round is sent: Poisson arrivals at a request rate, seeded, as
// `vllm bench serve --request-rate R` draws them (vllm/benchmarks/serve.py get_request, burstiness
// 1): the gaps between arrivals are exponential with mean 1/R, summed, and the sums rescaled so the
// last arrival falls at n/R exactly (vLLM does this so that throughput does not move with the seed).
// The offsets feed StreamRequest::start_at_s; stream_concurrent bounds the requests in flight
// (vLLM's --max-concurrency): a request due while the bound is reached waits for one to finish.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fp {

// n send offsets in seconds after the round's start, non-decreasing. rate_per_s <= 0 or infinite:
// every request at once (vLLM's default rate, inf). The same (n, rate, seed) always gives the same
// offsets, on every platform (util/splitmix64.h).
std::vector<double> poisson_arrivals(size_t n, double rate_per_s, uint64_t seed);

// The seed of one round's schedule: the case's seed, the concurrency level and the round, mixed, so
// every round has its own schedule and every run and launch of the case the same ones.
uint64_t arrival_seed(int case_seed, int level, int round);

}  // namespace fp
