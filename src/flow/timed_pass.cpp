#include "flow/timed_pass.h"

#include <chrono>
#include <csignal>

#include "flow/progress.h"
#include "flow/request_builder.h"
#include "measure/gpu_sampler.h"
#include "runtime/process.h"

namespace fp {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<pid_t> group_pids(pid_t pgid) { return pids_in_process_group(pgid); }

}  // namespace

Result<TimedPass> run_timed_pass(const CaseContext& ctx, const TimedOptions& options) {
  const Case& c = ctx.c;
  const int warmup = options.warmup >= 0 ? options.warmup : c.plan.warmup;
  const int reps = options.repetitions >= 0 ? options.repetitions : c.plan.repetitions;
  TimedPass out;
  // An attached server (case "attach") is used as it is: no launch, no cold start, no process of ours.
  std::optional<RunningServer> launched;
  std::string base_url;
  if (c.attach) {
    base_url = c.attach->endpoint;
  } else {
    out.log_path = ctx.out_dir + "/timed.log";
    FP_TRY(int port, free_loopback_port());
    out.argv = expand_argv(c, ctx.runtime, ctx.model_path, port, ctx.flag_value, ctx.adapter.timed_args);
    LaunchSpec spec{out.argv, c.launch.env, out.log_path, port, c.plan.ready_timeout_s, ctx.cgroup_procs, ctx.runtime_cpus};
    FP_TRY(RunningServer server, start_server(spec, ctx.adapter));
    out.argv = server.argv;
    out.ready_s = server.ready_s;
    base_url = server.base_url;
    launched = std::move(server);
  }
  const pid_t pgid = launched ? launched->process.pid() : 0;
  GpuSampler sampler(launched ? Nvml::open() : Result<Nvml>(make_error("attached: the server is not flashproof's process")),
                     [pgid] { return group_pids(pgid); });
  sampler.start();

  auto deadline = Clock::now() + std::chrono::duration<double>(c.plan.timeout_s);
  auto request = [&](const Prompt& p) {
    double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    return stream_request(build_request(ctx, base_url, p, c.shape.max_output_tokens, std::max(left, 1.0)));
  };
  auto fail = [&](const std::string& what, const Error& e) {
    out.errors.push_back(what + ": " + e.message);
  };

  // Cold: the first request after ready, on its own (an attached server was warm before we came).
  if (launched) {
    out.cold_first_prompt = ctx.prompts.front().id;
    if (auto r = request(ctx.prompts.front())) out.cold_first = *r;
    else fail("cold first request (" + out.cold_first_prompt + ")", r.error());
  }

  for (int w = 0; w < warmup && out.errors.empty() && !interrupted(); ++w) {
    progress_repetition("warm-up", w + 1, warmup);
    for (const auto& p : ctx.prompts)
      if (auto r = request(p); !r) fail("warm-up request (" + p.id + ")", r.error());
  }

  for (int round = 0; round < reps && out.errors.empty() && !interrupted(); ++round) {
    progress_repetition("round", round + 1, reps);
    if (Clock::now() > deadline) {
      out.errors.push_back("the case's timeout_s (" + std::to_string(static_cast<int>(c.plan.timeout_s)) +
                           " s) ran out after " + std::to_string(round) + " of " + std::to_string(reps) + " rounds");
      break;
    }
    if (options.concurrent_rounds) {
      std::vector<StreamRequest> batch;
      for (const auto& p : ctx.prompts)
        batch.push_back(build_request(ctx, base_url, p, c.shape.max_output_tokens, c.plan.timeout_s));
      auto t0 = Clock::now();
      auto results = stream_concurrent(batch, static_cast<int>(batch.size()));
      out.round_wall_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      for (size_t i = 0; i < results.size(); ++i) {
        if (results[i]) out.requests.push_back({ctx.prompts[i].id, round, *results[i]});
        else fail("request " + ctx.prompts[i].id + " round " + std::to_string(round + 1), results[i].error());
      }
      continue;
    }
    for (const auto& p : ctx.prompts) {
      const auto cpu0 = launched ? thread_cpu_seconds(pgid) : std::nullopt;
      auto r = request(p);
      const auto cpu1 = launched ? thread_cpu_seconds(pgid) : std::nullopt;
      if (!r) {
        fail("request " + p.id + " round " + std::to_string(round + 1), r.error());
        break;
      }
      out.requests.push_back({p.id, round, *r, cpu0 && cpu1 ? *cpu1 - *cpu0 : -1.0});
    }
  }
  if (interrupted()) out.errors.push_back("interrupted");
  GpuSamplerReport gpu = sampler.stop();
  out.gpu_memory = gpu.measured ? gpu.describe() : gpu.not_measured_reason;
  if (!launched) return out;
  out.peak_rss_bytes = peak_rss_bytes(pgid);
  ExitInfo e = launched->process.stop(5.0);
  if (!out.errors.empty() && e.exited && (e.signal == SIGKILL || e.signal == SIGSEGV || e.signal == SIGABRT))
    out.errors.push_back("the runtime " + e.describe());
  return out;
}

}  // namespace fp
