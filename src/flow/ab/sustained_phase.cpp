#include "flow/ab/sustained_phase.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "client/metrics_scraper.h"
#include "client/stream_metrics.h"
#include "flow/passes/request_builder.h"
#include "runtime/launcher.h"
#include "runtime/process.h"
#include "util/format_number.h"
#include "util/seconds_since.h"
#include "util/text.h"

namespace fp {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> window_values(const std::vector<std::pair<double, double>>& by_start, size_t from, size_t n) {
  std::vector<double> out;
  for (size_t i = from; i < from + n && i < by_start.size(); ++i) out.push_back(by_start[i].second);
  return out;
}

}  // namespace

Result<SustainedPass> run_sustained_phase(const CaseContext& ctx, const LaunchPlacement& at, const SustainedOptions& options) {
  const Case& c = ctx.c;
  SustainedPass out;
  out.log_path = at.out_dir + "/sustained.log";
  FP_TRY(int port, free_loopback_port());
  out.argv = expand_argv(c, ctx.runtime, ctx.model_path, port, at.flag_value, timed_launch_args(ctx, at));
  LaunchSpec spec{out.argv, launch_env(ctx, at), out.log_path, port, c.plan.ready_timeout_s};
  FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
  out.argv = server.argv;
  const int conc = std::max(1, options.concurrency);
  auto make = [&](size_t i) {
    const Prompt& p = ctx.prompts[i % ctx.prompts.size()];
    return build_request(ctx, server.base_url, p, c.shape.max_output_tokens, c.plan.timeout_s);
  };
  out.duration_s = options.duration_s;
  // The runtime's state and its last log lines at the moment it stopped answering.
  auto note_stop = [&](const BatchOutcome& b, double phase_s) {
    SustainedStop st;
    st.first_error = b.unanswered;
    st.stalled = b.fates[b.unanswered_index] == RequestFate::stalled;
    st.stall_timeout_s = c.plan.stall_timeout_s;
    st.at_s = phase_s;
    st.runtime_state = process_group_state(server.process.pid());
    if (auto log = read_file(out.log_path)) {
      st.log_bytes = log->size();
      std::vector<std::string> lines;
      for (auto& l : split_lines(*log))
        if (!trim(l).empty()) lines.push_back(trim(l));
      const size_t keep = std::min<size_t>(lines.size(), 5);
      st.log_tail.assign(lines.end() - static_cast<long>(keep), lines.end());
    }
    out.stopped = st;
  };
  auto count_batch = [&](const BatchOutcome& b) {
    SustainedStop* st = out.stopped ? &*out.stopped : nullptr;
    for (RequestFate f : b.fates) {
      if (f != RequestFate::not_sent && f != RequestFate::not_due) ++out.sent;
      if (f == RequestFate::failed) ++out.failed;
      if (!st) continue;
      st->stalled_n += f == RequestFate::stalled;
      st->unreachable_n += f == RequestFate::unreachable;
      st->given_up_n += f == RequestFate::given_up;
      st->not_sent_n += f == RequestFate::not_sent;
    }
  };
  {
    BatchOutcome w = stream_batch({make(0)}, 1);
    if (!w.unanswered.empty() && !interrupted())
      note_stop(w, 0);
    else if (!w.results[0] && !interrupted())
      out.errors.push_back("sustained warm-up request: " + w.results[0].error().message);
  }

  // Closed loop: `conc` in flight, the next sent as one ends, none started after duration_s, and
  // none sent once one request stalled or found the server gone (client/stream_client.h
  // BatchOptions): both are checked inside the loop, request by request. The requests are handed
  // over in chunks sized from the rate so far to fill the time left (at least `conc`), because
  // stream_batch takes a list; a chunk that outlasts the time left ends at its start limit.
  std::optional<MetricsScraper> scraper;
  if (ctx.metrics.present) {  // timed_args turned the endpoint on (flow/passes/case_context.h)
    scraper.emplace(server.base_url, ctx.metrics);
    scraper->start();
  }
  const auto t0 = Clock::now();
  size_t next = 0;
  while (!out.stopped && !interrupted() && seconds_since(t0) < options.duration_s) {
    const double elapsed = seconds_since(t0), left = options.duration_s - elapsed;
    size_t n = static_cast<size_t>(conc);
    if (next > 0 && elapsed > 0) n = std::max(n, static_cast<size_t>(left * static_cast<double>(next) / elapsed) + 1);
    n = std::min(n, static_cast<size_t>(64 * conc));
    std::vector<StreamRequest> chunk;
    for (size_t i = 0; i < n; ++i) chunk.push_back(make(next + i));
    const double chunk_start = seconds_since(t0);
    BatchOptions bo;
    bo.start_until_s = left;
    BatchOutcome b = stream_batch(chunk, conc, bo);
    if (!b.unanswered.empty() && !interrupted()) note_stop(b, chunk_start + b.unanswered_at_s);
    count_batch(b);
    size_t failed = 0;
    for (size_t i = 0; i < b.results.size(); ++i) {
      const std::string id = ctx.prompts[(next + i) % ctx.prompts.size()].id;
      if (b.results[i]) {
        out.requests.push_back({id, chunk_start + b.results[i]->start_offset_s, *b.results[i]});
      } else if (b.fates[i] == RequestFate::failed && !interrupted()) {
        if (failed++ == 0) out.errors.push_back("sustained request " + id + ": " + b.results[i].error().message);
      }
    }
    if (failed > 1) out.errors.back() += " (" + std::to_string(failed) + " requests of this chunk answered with an error)";
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

std::string sustained_stop_line(const SustainedPass& pass) {
  if (!pass.stopped) return "";
  const SustainedStop& st = *pass.stopped;
  char head[160];
  std::snprintf(head, sizeof head, "%zu of %zu sustained requests ", st.stalled_n + st.unreachable_n, pass.sent);
  std::string line = head;
  if (st.stalled)
    line += "sent no byte for " + significant(st.stall_timeout_s, 6) + " s (stalled)";
  else
    line += "found the server gone (no connection, or it dropped without an answer)";
  if (st.given_up_n) line += ", " + std::to_string(st.given_up_n) + " in flight given up with them";
  if (st.not_sent_n) line += ", " + std::to_string(st.not_sent_n) + " not sent";
  char at[120];
  std::snprintf(at, sizeof at, ": the server stopped answering %.1f s into the %.0f s phase", st.at_s, pass.duration_s);
  line += at;
  line += "; the runtime then: " + st.runtime_state;
  return line;
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
      // Waiting before the prompt ran: what the server's prefill and its decode before the first
      // text (measure/ttft_split.h) do not account for.
      if (s.server.present()) {
        const double before_text = std::isfinite(s.at_first_text.decode_ms) ? s.at_first_text.decode_ms : 0;
        f.queue_ms.push_back(std::max(0.0, s.ttft_s * 1e3 - s.server.prompt_ms - before_text));
      }
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
