#include "flow/passes/figures.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "client/stream_metrics.h"
#include "measure/goodput.h"
#include "measure/stats.h"

namespace fp {

namespace {

// The job's figures in the golden path: the registry's (FigureDef::golden_gated_jobs).
bool gates(Job job, const std::string& name) {
  const FigureDef* d = figure_def(name);
  return d && d->name == name && (d->golden_gated_jobs & figure_job(job));
}

void add_figure(std::vector<FigureResult>& out, Job job, const std::string& name, std::vector<double> samples) {
  if (samples.empty()) return;
  FigureResult f;
  f.name = name;
  f.summary = summarize(samples);
  f.samples = std::move(samples);
  f.gate = gates(job, name);
  f.lower_is_better = figure_lower_is_better(name);
  out.push_back(std::move(f));
}

}  // namespace

LatencyTargets latency_targets(const Targets& t) {
  LatencyTargets out;
  auto get = [&](const char* name) {
    auto it = t.max_ms.find(name);
    return it == t.max_ms.end() ? kNoValue : it->second;
  };
  out.ttft_ms = get("ttft_ms");
  out.tpot_ms = get("tpot_ms");
  out.e2e_ms = get("e2e_ms");
  return out;
}

RequestLatency request_latency(const StreamResult& r) {
  RequestLatency l;
  if (r.ttft_s >= 0) l.ttft_ms = r.ttft_s * 1e3;
  if (r.e2e_s >= 0) l.e2e_ms = r.e2e_s * 1e3;
  if (r.completion_tokens >= 0 && r.completion_tokens <= 1) l.tpot_ms = 0;  // as vLLM counts it for goodput
  else if (auto t = tpot_s(r)) l.tpot_ms = *t * 1e3;
  return l;
}

namespace {

// goodput_share and goodput_requests_per_s, one sample per round.
void add_goodput(std::vector<FigureResult>& out, Job job, const Targets& targets, const TimedPass& pass) {
  const LatencyTargets t = latency_targets(targets);
  std::map<int, std::vector<RequestLatency>> by_round;
  for (const auto& tr : pass.requests) by_round[tr.round].push_back(request_latency(tr.result));
  const std::map<int, double> durations = round_durations_s(pass);
  std::vector<double> share, per_s;
  for (const auto& [round, reqs] : by_round) {
    auto d = durations.find(round);
    const Goodput g = goodput(reqs, t, d == durations.end() ? 0.0 : d->second);
    if (std::isfinite(g.share)) share.push_back(g.share);
    if (std::isfinite(g.per_s)) per_s.push_back(g.per_s);
  }
  add_figure(out, job, "goodput_share", share);
  add_figure(out, job, "goodput_requests_per_s", per_s);
  for (auto& f : out)
    if (f.name == "goodput_share") f.gate = targets.gate;  // no job gates on it; the targets may
}

std::vector<FigureResult> level_figures(const Case& c, const TimedPass& pass) {
  std::vector<FigureResult> out = compute_figures(c.job, pass);
  const std::map<int, double> durations = round_durations_s(pass);
  std::map<int, double> completed;
  for (const auto& tr : pass.requests) completed[tr.round] += 1;
  std::vector<double> rate;
  for (const auto& [round, n] : completed)
    if (auto d = durations.find(round); d != durations.end() && d->second > 0) rate.push_back(n / d->second);
  add_figure(out, c.job, "requests_per_s", rate);
  return out;
}

}  // namespace

std::map<int, double> round_durations_s(const TimedPass& pass) {
  std::map<int, double> out;
  std::map<int, std::pair<double, double>> span;  // first sent, last done
  for (const auto& tr : pass.requests) {
    if (tr.round >= 0 && static_cast<size_t>(tr.round) < pass.round_wall_s.size() && pass.round_wall_s[static_cast<size_t>(tr.round)] > 0) {
      out[tr.round] = pass.round_wall_s[static_cast<size_t>(tr.round)];
      continue;
    }
    if (tr.sent_s < 0 || tr.result.e2e_s < 0) continue;
    auto it = span.find(tr.round);
    const double done = tr.sent_s + tr.result.e2e_s;
    if (it == span.end()) span[tr.round] = {tr.sent_s, done};
    else it->second = {std::min(it->second.first, tr.sent_s), std::max(it->second.second, done)};
  }
  for (const auto& [round, s] : span)
    if (!out.count(round)) out[round] = s.second - s.first;
  return out;
}

TimedPass level_pass(const TimedPass& pass, int level) {
  TimedPass out;
  std::map<int, int> renumber;
  for (const auto& tr : pass.requests) {
    if (tr.level != level) continue;
    auto [it, fresh] = renumber.emplace(tr.round, static_cast<int>(renumber.size()));
    if (fresh) {
      const bool has_wall = tr.round >= 0 && static_cast<size_t>(tr.round) < pass.round_wall_s.size();
      out.round_wall_s.push_back(has_wall ? pass.round_wall_s[static_cast<size_t>(tr.round)] : 0.0);
    }
    TimedRequest moved = tr;
    moved.round = it->second;
    out.requests.push_back(std::move(moved));
  }
  return out;
}

std::vector<FigureResult> case_figures(const Case& c, const TimedPass& pass) {
  if (c.plan.concurrency.empty()) {
    std::vector<FigureResult> out = compute_figures(c.job, pass);
    if (c.targets) add_goodput(out, c.job, *c.targets, pass);
    return out;
  }
  std::vector<FigureResult> out;
  for (int level : c.plan.concurrency) {
    const TimedPass one = level_pass(pass, level);
    std::vector<FigureResult> figs = level_figures(c, one);
    if (c.targets) add_goodput(figs, c.job, *c.targets, one);
    for (auto& f : figs) {
      f.name = "c" + std::to_string(level) + "." + f.name;
      out.push_back(std::move(f));
    }
  }
  return out;
}

RequestFacts request_facts(const TimedRequest& tr) {
  const StreamResult& r = tr.result;
  RequestFacts f;
  f.ttft_s = r.ttft_s;
  f.e2e_s = r.e2e_s;
  if (auto t = tpot_s(r)) f.tpot_s = *t;
  f.prompt_tokens = r.prompt_tokens;
  f.completion_tokens = r.completion_tokens;
  f.runtime_cpu_s = tr.runtime_cpu_s;
  f.event_times_s = r.content_event_times_s;
  f.gaps_s = inter_event_gaps_s(r);
  f.server_prompt_ms = r.server.prompt_ms;
  f.server_decode_ms = r.server.decode_ms;
  f.server_decode_tokens = r.server.decode_tokens;
  return f;
}

LaunchFacts launch_facts(const TimedPass& pass) {
  LaunchFacts l;
  l.ready_s = pass.ready_s;
  l.cold_first_ttft_s = pass.cold_first.ttft_s;
  l.cold_first_e2e_s = pass.cold_first.e2e_s;
  for (const auto& tr : pass.requests) l.requests.push_back(request_facts(tr));
  for (const auto& tr : pass.probes) l.probes.push_back(request_facts(tr));
  return l;
}

std::vector<RoundFacts> round_facts(const TimedPass& pass, const std::vector<RequestFacts>& requests) {
  std::map<int, RoundFacts> rounds;
  for (size_t i = 0; i < pass.requests.size() && i < requests.size(); ++i) rounds[pass.requests[i].round].requests.push_back(&requests[i]);
  for (size_t i = 0; i < pass.round_wall_s.size(); ++i) rounds[static_cast<int>(i)].wall_s = pass.round_wall_s[i];
  std::vector<RoundFacts> out;
  for (auto& [round, r] : rounds) out.push_back(std::move(r));
  return out;
}

std::vector<FigureResult> compute_figures(Job job, const TimedPass& pass) {
  std::vector<RequestFacts> requests;
  for (const auto& tr : pass.requests) requests.push_back(request_facts(tr));
  const std::vector<RoundFacts> rounds = round_facts(pass, requests);
  std::vector<FigureResult> out;
  for (const auto& d : figure_registry()) {
    if (!(d.engines & kGoldenEngine)) continue;
    std::vector<double> samples;
    if (d.per_request)
      for (const auto& r : requests) d.per_request(r, samples);
    if (d.per_round)
      for (const auto& r : rounds)
        if (auto v = d.per_round(r)) samples.push_back(*v);
    add_figure(out, job, std::string(d.name), std::move(samples));
  }
  return out;
}

TtftSplit ttft_split_of(const TimedPass& pass) {
  std::vector<TtftPart> parts;
  for (const auto& tr : pass.requests) {
    const StreamResult& r = tr.result;
    if (r.ttft_s < 0 || !r.server.present()) continue;
    TtftPart p;
    p.ttft_ms = r.ttft_s * 1e3;
    p.prefill_ms = r.server.prompt_ms;
    p.decode_before_text_ms = r.at_first_text.decode_ms;
    p.tokens_before_text = r.at_first_text.decode_tokens;
    p.prompt_tokens = r.server.prompt_tokens;
    p.cached_tokens = r.server.cached_tokens;
    parts.push_back(p);
  }
  return split_ttft(parts);
}

std::string fidelity_summary(const TimedPass& pass) {
  std::vector<double> gap;
  const RequestExtractor client_minus_server = figure_def("client_minus_server_prompt_ms")->per_request;
  for (const auto& tr : pass.requests) client_minus_server(request_facts(tr), gap);
  if (gap.empty()) return "not measured: the runtime reported no prompt timings";
  Summary s = summarize(gap);
  char buf[200];
  std::snprintf(buf, sizeof buf, "client TTFT - server prompt_ms: median %.3f ms, p99 %.3f ms over %zu requests",
                s.median, s.p99, s.n);
  return buf;
}

}  // namespace fp
