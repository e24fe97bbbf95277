#include "flow/figures.h"

#include <cstdio>
#include <map>

#include "client/stream_metrics.h"
#include "measure/stats.h"

namespace fp {
namespace {

bool gates(Job job, const std::string& name) {
  switch (job) {
    case Job::Chat: return name == "ttft_ms_p95";
    case Job::Completion: return name == "ttft_ms_p95" || name == "itl_ms";
    case Job::Extraction: return false;
    case Job::Batch: return name == "throughput_tokens_per_s";
  }
  return false;
}

void add(std::vector<FigureResult>& out, Job job, const std::string& name, std::vector<double> samples, bool lower_is_better) {
  if (samples.empty()) return;
  FigureResult f;
  f.name = name;
  f.summary = summarize(samples);
  f.samples = std::move(samples);
  f.gate = gates(job, name);
  f.lower_is_better = lower_is_better;
  out.push_back(std::move(f));
}

}  // namespace

std::vector<FigureResult> compute_figures(Job job, const TimedPass& pass) {
  std::vector<double> ttft, e2e, tpot, itl, decode_tps, prompt_tps, gap;
  std::map<int, std::vector<double>> ttft_by_round;
  for (const auto& tr : pass.requests) {
    const StreamResult& r = tr.result;
    if (r.ttft_s >= 0) {
      ttft.push_back(r.ttft_s * 1e3);
      ttft_by_round[tr.round].push_back(r.ttft_s * 1e3);
      if (r.prompt_tokens > 0) prompt_tps.push_back(r.prompt_tokens / r.ttft_s);
    }
    if (r.e2e_s >= 0) e2e.push_back(r.e2e_s * 1e3);
    if (auto t = tpot_s(r); t && *t > 0) {
      tpot.push_back(*t * 1e3);
      decode_tps.push_back(1.0 / *t);
    }
    for (double g : inter_event_gaps_s(r)) itl.push_back(g * 1e3);
    if (r.server_timings.is_object() && r.server_timings.contains("prompt_ms") && r.ttft_s >= 0)
      gap.push_back(r.ttft_s * 1e3 - r.server_timings["prompt_ms"].get<double>());
  }
  std::vector<double> ttft_p95;
  for (const auto& [round, v] : ttft_by_round) ttft_p95.push_back(percentile(v, 95));
  std::vector<double> throughput;
  if (!pass.round_wall_s.empty()) {
    std::map<int, double> tokens;
    for (const auto& tr : pass.requests) tokens[tr.round] += std::max(0, tr.result.completion_tokens);
    for (size_t i = 0; i < pass.round_wall_s.size(); ++i)
      if (pass.round_wall_s[i] > 0) throughput.push_back(tokens[static_cast<int>(i)] / pass.round_wall_s[i]);
  }
  std::vector<FigureResult> out;
  add(out, job, "ttft_ms", ttft, true);
  add(out, job, "ttft_ms_p95", ttft_p95, true);
  add(out, job, "tpot_ms", tpot, true);
  add(out, job, "itl_ms", itl, true);
  add(out, job, "e2e_ms", e2e, true);
  add(out, job, "prompt_tokens_per_s", prompt_tps, false);
  add(out, job, "decode_tokens_per_s", decode_tps, false);
  add(out, job, "throughput_tokens_per_s", throughput, false);
  add(out, job, "client_minus_server_prompt_ms", gap, true);
  for (auto& f : out)
    if (f.name == "client_minus_server_prompt_ms") f.gate = false;
  return out;
}

std::string fidelity_summary(const TimedPass& pass) {
  std::vector<double> gap;
  for (const auto& tr : pass.requests) {
    const auto& r = tr.result;
    if (r.server_timings.is_object() && r.server_timings.contains("prompt_ms") && r.ttft_s >= 0)
      gap.push_back(r.ttft_s * 1e3 - r.server_timings["prompt_ms"].get<double>());
  }
  if (gap.empty()) return "not measured: the runtime reported no prompt timings";
  Summary s = summarize(gap);
  char buf[200];
  std::snprintf(buf, sizeof buf, "client TTFT - server prompt_ms: median %.3f ms, p99 %.3f ms over %zu requests",
                s.median, s.p99, s.n);
  return buf;
}

}  // namespace fp
