#include "flow/passes/figures.h"

#include <cmath>
#include <cstdio>
#include <cctype>
#include <map>
#include <set>

#include "client/stream_metrics.h"
#include "measure/goodput.h"
#include "measure/stats.h"

namespace fp {

double server_number(const StreamResult& r, const char* key) {
  if (!r.server_timings.is_object() || !r.server_timings.contains(key) || !r.server_timings[key].is_number()) return kNoValue;
  return r.server_timings[key].get<double>();
}

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

bool figure_lower_is_better(const std::string& name) {
  static const std::set<std::string> higher_is_better = {"prompt_tokens_per_s", "decode_tokens_per_s", "throughput_tokens_per_s",
                                                         "requests_per_s",      "goodput_share",       "goodput_requests_per_s"};
  std::string figure = name;  // "c4.ttft_ms" -> "ttft_ms"
  if (figure.size() > 2 && figure[0] == 'c' && std::isdigit(static_cast<unsigned char>(figure[1])))
    if (const size_t dot = figure.find('.'); dot != std::string::npos) figure = figure.substr(dot + 1);
  return higher_is_better.count(figure) == 0;
}

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

std::vector<FigureResult> compute_figures(Job job, const TimedPass& pass) {
  std::vector<double> ttft, e2e, tpot, itl, decode_tps, prompt_tps, gap, server_prompt, server_tpot, cpu_per_token;
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
    // Low-noise figures: the runtime's own timings and its CPU time per processed token (the
    // side-by-side engine's units, flow/paired/paired_runner.h launch_units).
    if (const double p = server_number(r, "prompt_ms"); std::isfinite(p) && p > 0) server_prompt.push_back(p);
    if (const double n = server_number(r, "predicted_n"); n >= 1) {
      const double ms = server_number(r, "predicted_ms");
      if (std::isfinite(ms) && ms > 0) server_tpot.push_back(ms / n);
    }
    const int tokens = std::max(0, r.prompt_tokens) + std::max(0, r.completion_tokens);
    if (tr.runtime_cpu_s >= 0 && tokens > 0) cpu_per_token.push_back(tr.runtime_cpu_s * 1e3 / tokens);
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
  add_figure(out, job, "ttft_ms", ttft);
  add_figure(out, job, "ttft_ms_p95", ttft_p95);
  add_figure(out, job, "tpot_ms", tpot);
  add_figure(out, job, "itl_ms", itl);
  add_figure(out, job, "e2e_ms", e2e);
  add_figure(out, job, "prompt_tokens_per_s", prompt_tps);
  add_figure(out, job, "decode_tokens_per_s", decode_tps);
  add_figure(out, job, "throughput_tokens_per_s", throughput);
  add_figure(out, job, "client_minus_server_prompt_ms", gap);
  add_figure(out, job, "server_prompt_ms", server_prompt);
  add_figure(out, job, "server_tpot_ms", server_tpot);
  add_figure(out, job, "cpu_ms_per_token", cpu_per_token);
  for (auto& f : out)
    if (f.name == "client_minus_server_prompt_ms") f.gate = false;
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
