#include "flow/ab/sustained_phase.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "client/metrics_scraper.h"
#include "client/stream_metrics.h"
#include "flow/passes/request_builder.h"
#include "runtime/launcher.h"
#include "runtime/process.h"
#include "util/seconds_since.h"

namespace fp {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> window_values(const std::vector<std::pair<double, double>>& by_start, size_t from, size_t n) {
  std::vector<double> out;
  for (size_t i = from; i < from + n && i < by_start.size(); ++i) out.push_back(by_start[i].second);
  return out;
}

}  // namespace

Result<SustainedPass> run_sustained_phase(const CaseContext& ctx, const SustainedOptions& options) {
  const Case& c = ctx.c;
  SustainedPass out;
  out.log_path = ctx.out_dir + "/sustained.log";
  FP_TRY(int port, free_loopback_port());
  out.argv = expand_argv(c, ctx.runtime, ctx.model_path, port, ctx.flag_value, ctx.adapter.timed_args);
  LaunchSpec spec{out.argv, c.launch.env, out.log_path, port, c.plan.ready_timeout_s};
  FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
  out.argv = server.argv;
  const int conc = std::max(1, options.concurrency);
  auto make = [&](size_t i) {
    const Prompt& p = ctx.prompts[i % ctx.prompts.size()];
    return build_request(ctx, server.base_url, p, c.shape.max_output_tokens, c.plan.timeout_s);
  };
  if (auto w = stream_request(make(0)); !w && !interrupted()) out.errors.push_back("sustained warm-up request: " + w.error().message);

  // Closed loop in chunks: `conc` in flight, the next sent as one ends. Each chunk is sized from the
  // rate so far to fill the time left (at least `conc` requests), so the phase ends near duration_s.
  std::optional<MetricsScraper> scraper;
  if (ctx.metrics.present) {  // timed_args turned the endpoint on (flow/passes/case_context.h)
    scraper.emplace(server.base_url, ctx.metrics);
    scraper->start();
  }
  const auto t0 = Clock::now();
  size_t next = 0;
  while (out.errors.empty() && !interrupted() && seconds_since(t0) < options.duration_s) {
    const double elapsed = seconds_since(t0), left = options.duration_s - elapsed;
    size_t n = static_cast<size_t>(conc);
    if (next > 0 && elapsed > 0) n = std::max(n, static_cast<size_t>(left * static_cast<double>(next) / elapsed));
    n = std::min(n, static_cast<size_t>(64 * conc));
    std::vector<StreamRequest> chunk;
    for (size_t i = 0; i < n; ++i) chunk.push_back(make(next + i));
    const double chunk_start = seconds_since(t0);
    auto results = stream_concurrent(chunk, conc);
    // The first failure of a chunk, and how many more: a runtime that died (or was stopped by an
    // interrupt, said once below) fails every request still to come in the same way.
    size_t failed = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      const std::string id = ctx.prompts[(next + i) % ctx.prompts.size()].id;
      if (!results[i]) {
        if (failed++ == 0 && !interrupted()) out.errors.push_back("sustained request " + id + ": " + results[i].error().message);
        continue;
      }
      out.requests.push_back({id, chunk_start + results[i]->start_offset_s, *results[i]});
    }
    if (failed > 1 && !interrupted())
      out.errors.back() += " (" + std::to_string(failed) + " of the " + std::to_string(results.size()) + " requests of this chunk failed)";
    next += chunk.size();
  }
  out.wall_s = seconds_since(t0);
  if (scraper) {
    out.server_gauges = scraper->stop();
    for (const auto& r : out.requests) {
      if (r.result.prompt_tokens < 0 || r.result.completion_tokens < 0) out.server_gauges->own_known = false;
      out.server_gauges->own_prompt_tokens += std::max(r.result.prompt_tokens, 0);
      out.server_gauges->own_output_tokens += std::max(r.result.completion_tokens, 0);
    }
  }
  if (interrupted()) out.errors.push_back(interrupted_text());
  server.process.stop(5.0);
  std::stable_sort(out.requests.begin(), out.requests.end(),
                   [](const SustainedRequest& a, const SustainedRequest& b) { return a.start_s < b.start_s; });
  return out;
}

SustainedFigures sustained_figures(const SustainedPass& pass, int concurrency) {
  SustainedFigures f;
  f.requests = pass.requests.size();
  f.concurrency = concurrency;
  f.wall_s = pass.wall_s;
  std::vector<std::pair<double, double>> ttft_by_start, tpot_by_start;
  long tokens = 0;
  for (const auto& r : pass.requests) {
    const StreamResult& s = r.result;
    tokens += std::max(0, s.completion_tokens);
    if (s.ttft_s >= 0) {
      f.ttft_ms.push_back(s.ttft_s * 1e3);
      ttft_by_start.emplace_back(r.start_s, s.ttft_s * 1e3);
      if (!std::isnan(s.server.prompt_ms)) f.queue_ms.push_back(std::max(0.0, s.ttft_s * 1e3 - s.server.prompt_ms));
    }
    if (auto t = tpot_s(s); t && *t > 0) {
      f.tpot_ms.push_back(*t * 1e3);
      tpot_by_start.emplace_back(r.start_s, *t * 1e3);
    }
  }
  if (pass.wall_s > 0 && !pass.requests.empty()) f.throughput_tokens_per_s = static_cast<double>(tokens) / pass.wall_s;
  auto drift = [&](const std::string& name, std::vector<std::pair<double, double>> v) {
    if (v.size() < 16) return;
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const size_t w = v.size() / 4;
    Drift d;
    d.figure = name;
    d.window = w;
    d.first_vs_last = compare_ab(window_values(v, 0, w), window_values(v, v.size() - w, w));
    f.drift.push_back(d);
  };
  drift("ttft_ms", ttft_by_start);
  drift("tpot_ms", tpot_by_start);
  return f;
}

}  // namespace fp
