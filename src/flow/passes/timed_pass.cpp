#include "flow/passes/timed_pass.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <optional>

#include "client/arrival_schedule.h"
#include "client/metrics_scraper.h"
#include "flow/passes/progress.h"
#include "flow/passes/prompt_tokens.h"
#include "flow/passes/request_builder.h"
#include "measure/gpu_sampler.h"
#include "measure/machine_load.h"
#include "measure/reference_workload.h"
#include "measure/throughput_reference.h"
#include "runtime/process.h"

namespace fp {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<pid_t> group_pids(pid_t pgid) { return pids_in_process_group(pgid); }

// Passes of the throughput reference per sample between requests (the launch's value is the median
// of all its samples): 3 keep a sample near 15 ms on a 2-core VM and under 0.1 s on a 16-CPU host.
constexpr int kBetweenRequestsPasses = 3;

template <class Duration>
double in_seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

// How fast the cores are: both machine-speed references (golden/compare.h kReferenceFigure,
// kThroughputFigure), each the median of its passes.
struct MachineSpeed {
  double reference_ms = 0, throughput_ms = 0;
};
MachineSpeed time_machine_speed() { return {time_reference_workload(), time_throughput_reference()}; }

// flashproof's own token counts (the answers' usage) beside the server's counters.
void own_token_counts(const std::vector<TimedRequest>& requests, ServerGauges& g) {
  for (const auto& r : requests) {
    if (r.result.prompt_tokens < 0 || r.result.completion_tokens < 0) g.own_known = false;
    g.own_prompt_tokens += std::max(r.result.prompt_tokens, 0);
    g.own_output_tokens += std::max(r.result.completion_tokens, 0);
  }
}

}  // namespace

size_t level_requests(const Case& c, int level, size_t prompts) {
  return c.plan.requests > 0 ? static_cast<size_t>(c.plan.requests) : std::max(static_cast<size_t>(level), prompts);
}

Result<TimedPass> run_timed_pass(const CaseContext& ctx, const LaunchPlacement& at, const TimedOptions& options) {
  const Case& c = ctx.c;
  const int warmup = options.warmup >= 0 ? options.warmup : c.plan.warmup;
  const int reps = options.repetitions >= 0 ? options.repetitions : c.plan.repetitions;
  const int probes = ctx.adapter.decode_probe ? std::max(0, options.decode_probes) : 0;
  TimedPass out;
  // Interleaved: the launch through the warm-up is this pass's first step, each measured request
  // (concurrent round) one more, the closing sample and stop the last.
  StepTurns* turns = options.turns;
  struct Leave {
    StepTurns* t;
    ~Leave() {
      if (t) t->leave();
    }
  } leave_on_return{turns};
  if (turns) turns->begin();
  // An attached server (case "attach") is used as it is: no launch, no cold start, no process of ours.
  std::optional<RunningServer> launched;
  std::optional<MachineSpeed> speed_before;
  std::string base_url;
  if (c.attach) {
    base_url = c.attach->endpoint;
  } else {
    // How fast the cores are tonight, timed before the runtime starts so that it competes with
    // nothing of ours (golden/compare.h kReferenceFigure), and again after the timed requests.
    speed_before = time_machine_speed();
    out.log_path = at.out_dir + "/timed.log";
    FP_TRY(int port, free_loopback_port());
    out.argv = expand_argv(c, ctx.runtime, ctx.model_path, port, at.flag_value, timed_launch_args(ctx, at));
    LaunchSpec spec{out.argv, launch_env(ctx, at), out.log_path, port, c.plan.ready_timeout_s, at.cgroup_procs, at.runtime_cpus};
    FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
    out.argv = server.argv;
    out.ready_s = server.ready_s;
    base_url = server.base_url;
    launched = std::move(server);
  }
  const Clock::time_point ready = Clock::now();
  // Fitted by the evidence pass already on `flashproof run`'s path; otherwise here (tokenizer
  // requests only, before the cold first request).
  FP_TRY(FittedPrompts fitted, fit_case_prompts(ctx, base_url));
  const std::vector<Prompt>& prompts = fitted.prompts;

  const pid_t pgid = launched ? launched->process.pid() : 0;
  GpuSampler sampler(launched ? Nvml::open() : Result<Nvml>(make_error("attached: the server is not flashproof's process")),
                     [pgid] { return group_pids(pgid); });
  sampler.start();
  // How much of the machine others took while this launch was timed (measure/machine_load.h).
  const auto busy0 = busy_cpu_seconds();
  const auto runtime0 = launched ? thread_cpu_seconds(pgid) : std::nullopt;
  const double own0 = own_cpu_seconds();
  const auto load_t0 = Clock::now();
  // Memory left while it serves: after the warm-up and after every round, the lowest kept.
  const Result<Nvml> nvml_free = launched ? Nvml::open() : Result<Nvml>(make_error("attached: the server is not flashproof's process"));
  // And who else holds memory there: the processes other than the runtime's, on the GPUs and, for the
  // case's neighbours on the host, on the host (measure/memory_holders.h).
  BesideRuntime beside{pgid, {}};
  if (c.headroom)
    for (const auto& n : c.headroom->neighbours)
      if (n.device == "CPU") beside.host_needles.push_back(n.match);
  auto note_free_memory = [&] {
    if (launched) out.free_memory_low.keep_lowest(read_free_memory(nvml_free, beside));
  };

  auto deadline = Clock::now() + std::chrono::duration<double>(c.plan.timeout_s);
  auto time_left = [&] { return std::max(in_seconds(deadline - Clock::now()), 1.0); };
  auto make = [&](const Prompt& p, double timeout_s) {
    return build_request(ctx, base_url, p, c.shape.max_output_tokens, timeout_s);
  };
  auto request = [&](const Prompt& p) { return stream_request(make(p, time_left())); };
  if (speed_before && options.machine_samples) out.throughput_samples_ms.push_back(speed_before->throughput_ms);
  auto sample_machine = [&] {
    if (launched && options.machine_samples) out.throughput_samples_ms.push_back(time_throughput_reference(kBetweenRequestsPasses));
  };
  auto begin_step = [&] {
    if (turns) deadline += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(turns->begin()));
  };
  auto end_step = [&] {
    if (turns) turns->end();
  };
  // After a round, between steps: a step of its own, so that reading free memory (an NVML query on a
  // GPU) never runs beside the other pass's request.
  auto note_free_memory_in_turn = [&] {
    begin_step();
    note_free_memory();
    end_step();
  };
  // After an interrupt the runtime's group was killed (runtime/process.h): the requests' connection
  // errors are that kill's doing, not failures of their own; "interrupted" says it once below.
  auto fail = [&](const std::string& what, const Error& e) {
    if (!interrupted()) out.errors.push_back(what + ": " + e.message);
  };
  auto out_of_time = [&](int round, int rounds) {
    if (Clock::now() <= deadline) return false;
    out.errors.push_back("the case's timeout_s (" + std::to_string(static_cast<int>(c.plan.timeout_s)) +
                         " s) ran out after " + std::to_string(round) + " of " + std::to_string(rounds) + " rounds");
    return true;
  };
  // One round with several requests in flight: at most `concurrency`, each not before its offset.
  auto concurrent_round = [&](const std::vector<const Prompt*>& ps, const std::vector<double>& at, int concurrency,
                              int round, int level) {
    std::vector<StreamRequest> batch;
    for (size_t i = 0; i < ps.size(); ++i) {
      batch.push_back(make(*ps[i], level > 0 ? time_left() : c.plan.timeout_s));
      batch.back().start_at_s = at.empty() ? 0 : at[i];
    }
    begin_step();
    const auto t0 = Clock::now();
    // A server that stops answering ends the round at its first stall (client/stream_client.h
    // BatchOptions): one line for it, with how many were given up and not sent, not one per request.
    BatchOutcome b = stream_batch(batch, concurrency);
    auto& results = b.results;
    out.round_wall_s.push_back(in_seconds(Clock::now() - t0));
    sample_machine();
    end_step();
    const std::string where =
        " round " + std::to_string(round + 1) + (level > 0 ? " at concurrency " + std::to_string(level) : std::string());
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i]) {
        out.requests.push_back({ps[i]->id, round, *results[i], -1.0, level, in_seconds(t0 - ready) + results[i]->start_offset_s});
      } else if (b.fates[i] != RequestFate::given_up && b.fates[i] != RequestFate::not_sent) {
        fail("request " + ps[i]->id + where, results[i].error());
      }
    }
    if (!b.unanswered.empty() && !interrupted())
      out.errors.push_back("the server stopped answering in" + where + ": " + std::to_string(b.count(RequestFate::given_up)) +
                           " requests in flight given up, " + std::to_string(b.count(RequestFate::not_sent)) + " of " +
                           std::to_string(results.size()) + " not sent");
  };

  // Cold: the first request after ready, on its own (an attached server was warm before we came).
  if (launched) {
    out.cold_first_prompt = prompts.front().id;
    if (auto r = request(prompts.front())) out.cold_first = *r;
    else fail("cold first request (" + out.cold_first_prompt + ")", r.error());
  }

  for (int w = 0; w < warmup && out.errors.empty() && !interrupted(); ++w) {
    progress_repetition("warm-up", w + 1, warmup);
    for (const auto& p : prompts) {
      if (auto r = request(p); !r) {
        fail("warm-up request (" + p.id + ")", r.error());
        break;  // a server that stalled on one would stall on every other: one stall timeout, not one per prompt
      }
    }
  }

  note_free_memory();
  std::optional<MetricsScraper> scraper;
  if (ctx.metrics.present) {  // timed_args turned the endpoint on (flow/passes/case_context.h)
    scraper.emplace(base_url, ctx.metrics);
    scraper->start();
  }
  end_step();
  const std::vector<int> levels = options.levels ? c.plan.concurrency : std::vector<int>{};
  for (size_t k = 0; k < levels.size(); ++k) {
    const int level = levels[k];
    const size_t n = level_requests(c, level, prompts.size());
    std::vector<const Prompt*> ps;
    for (size_t i = 0; i < n; ++i) ps.push_back(&prompts[i % prompts.size()]);
    for (int r = 0; r < reps && out.errors.empty() && !interrupted(); ++r) {
      progress_repetition("concurrency " + std::to_string(level) + " round", r + 1, reps);
      if (out_of_time(static_cast<int>(k) * reps + r, static_cast<int>(levels.size()) * reps)) break;
      const auto at = poisson_arrivals(n, c.plan.request_rate, arrival_seed(c.seed, level, r));
      concurrent_round(ps, at, level, static_cast<int>(k) * reps + r, level);
      note_free_memory_in_turn();
    }
  }

  for (int round = 0; levels.empty() && round < reps && out.errors.empty() && !interrupted(); ++round) {
    progress_repetition("round", round + 1, reps);
    if (out_of_time(round, reps)) break;
    if (options.concurrent_rounds) {
      std::vector<const Prompt*> ps;
      for (const auto& p : prompts) ps.push_back(&p);
      concurrent_round(ps, {}, static_cast<int>(ps.size()), round, 0);
      note_free_memory_in_turn();
      continue;
    }
    for (const auto& p : prompts) {
      begin_step();
      const auto cpu0 = launched ? thread_cpu_seconds(pgid) : std::nullopt;
      const double sent = in_seconds(Clock::now() - ready);
      auto r = request(p);
      const auto cpu1 = launched ? thread_cpu_seconds(pgid) : std::nullopt;
      if (!r) {
        fail("request " + p.id + " round " + std::to_string(round + 1), r.error());
        end_step();
        break;
      }
      out.requests.push_back({p.id, round, *r, cpu0 && cpu1 ? *cpu1 - *cpu0 : -1.0, 0, sent});
      sample_machine();
      end_step();
      // Each probe a step of its own, so that the two passes' probes alternate one by one: four
      // probes back to back in the request's turn sample one moment of the machine, and their
      // block spread doubled (bench/README.md section 3). What they miss, a slowdown that grows with
      // sustained load, the full requests' decode guard catches (apply_decode_probes).
      for (int k = 0; k < probes && out.errors.empty(); ++k) {
        begin_step();
        const double probe_sent = in_seconds(Clock::now() - ready);
        if (auto q = stream_request(build_decode_probe(ctx, base_url, p, c.shape.max_output_tokens, time_left())))
          out.probes.push_back({p.id, round, *q, -1.0, 0, probe_sent});
        else
          fail("decode probe " + std::to_string(k + 1) + " of request " + p.id + " round " + std::to_string(round + 1), q.error());
        end_step();
      }
      if (!out.errors.empty()) break;
    }
    note_free_memory_in_turn();
  }
  if (interrupted()) out.errors.push_back(interrupted_text());
  begin_step();
  if (scraper) {
    out.server_gauges = scraper->stop();
    own_token_counts(out.requests, *out.server_gauges);
    own_token_counts(out.probes, *out.server_gauges);
  }
  if (launched) out.peak_rss_bytes = peak_rss_bytes(pgid);
  if (const auto busy1 = busy_cpu_seconds(); busy0 && busy1 && launched) {
    const auto runtime1 = thread_cpu_seconds(pgid);
    if (runtime0 && runtime1 && !turns)
      out.other_load = other_load_share(*busy1 - *busy0, *runtime1 - *runtime0, own_cpu_seconds() - own0,
                                        in_seconds(Clock::now() - load_t0), static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))));
  }
  GpuSamplerReport gpu = sampler.stop();
  out.gpu_memory = gpu.measured ? gpu.describe() : gpu.not_measured_reason;
  if (gpu.measured && !gpu.process_peaks.empty()) out.gpu_peak_mib = static_cast<double>(gpu.peak_total_bytes) / (1024.0 * 1024.0);
  if (!launched) {
    end_step();
    return out;
  }
  // Timed again after the requests, the runtime idle and not yet stopped, and the launch's value is
  // the mean of both: the two samples bracket the run, so cores that slowed during it show (one
  // sample before the start would miss a step in the middle of a long case).
  const MachineSpeed speed_after = time_machine_speed();
  if (options.machine_samples) out.throughput_samples_ms.push_back(speed_after.throughput_ms);
  out.reference_ms = (speed_before->reference_ms + speed_after.reference_ms) / 2;
  out.throughput_ms = (speed_before->throughput_ms + speed_after.throughput_ms) / 2;
  // How the runtime ended by itself, if it did, before stop() ends it: a crashed grandchild behind a
  // wrapper that does not exec included (runtime/process.h runtime_end).
  const ExitInfo own_end = launched->process.runtime_end();
  ExitInfo e = launched->process.stop(5.0);
  end_step();
  // The cause before its symptoms (the requests' connection errors); after an interrupt the
  // harness killed it itself.
  if (interrupted()) {
  } else if (!out.errors.empty() && own_end.exited && (own_end.signal || own_end.code != 0)) {
    out.errors.insert(out.errors.begin(), "the runtime " + own_end.describe());
  } else if (!out.errors.empty() && e.exited && (e.signal == SIGKILL || e.signal == SIGSEGV || e.signal == SIGABRT)) {
    out.errors.insert(out.errors.begin(), "the runtime " + e.describe());
  }
  return out;
}

}  // namespace fp
