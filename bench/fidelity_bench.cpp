// fidelity_bench: how far the client's view of a request is from the server's own, and what the
// harness costs. Launches the case's runtime once (flag on, quiet logging), warms up, then sends N
// streamed requests one after another over loopback and prints:
//  - the gap between the client's time to first token and llama-server's own prompt time
//    (timings.prompt_ms): median, p95, p99, min, max;
//  - the harness's own CPU time per request (getrusage of this process, user + system), and the
//    request's wall time, for scale.
// usage: fidelity_bench [CASE.json] [N]   (defaults: cases/chat-tiny-short.json, 200)
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flow/ab/ab_runner.h"
#include "flow/passes/request_builder.h"
#include "measure/stats.h"
#include "runtime/launcher.h"
#include "runtime/process.h"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

void print(const char* what, const std::vector<double>& v, const char* unit) {
  fp::Summary s = fp::summarize(v);
  std::printf("%-44s n %4zu  median %8.3f  p95 %8.3f  p99 %8.3f  min %8.3f  max %8.3f %s\n", what, s.n, s.median, s.p95, s.p99,
              s.min, s.max, unit);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fp;
  const std::string case_path = argc > 1 ? argv[1] : std::string(FLASHPROOF_SOURCE_DIR) + "/cases/chat-tiny-short.json";
  const int n = argc > 2 ? std::atoi(argv[2]) : 200;
  install_child_cleanup_handlers();
  auto ctx = resolve_case_context(case_path, *load_suite(FLASHPROOF_SOURCE_DIR));
  if (!ctx) {
    std::fprintf(stderr, "fidelity_bench: %s\n", ctx.error().message.c_str());
    return ctx.exit_code();
  }
  const std::string& flag_value = ctx->c.flag.on;
  auto port = free_loopback_port();
  if (!port) return 2;
  const std::string log = "/tmp/fidelity_bench-" + std::to_string(getpid()) + ".log";
  LaunchSpec spec{expand_argv(ctx->c, ctx->runtime, ctx->model_path, *port, flag_value, ctx->adapter.timed_args), ctx->c.launch.env, log,
                  *port, ctx->c.plan.ready_timeout_s};
  auto server = start_server(spec, ctx->adapter);
  if (!server) {
    std::fprintf(stderr, "fidelity_bench: %s\n", server.error().message.c_str());
    return 2;
  }
  auto request = [&](size_t i) {
    const Prompt& p = ctx->prompts[i % ctx->prompts.size()];
    return stream_request(build_request(*ctx, server->base_url, p, ctx->c.shape.max_output_tokens, 60));
  };
  for (size_t i = 0; i < ctx->prompts.size(); ++i) (void)request(i);  // warm-up

  std::vector<double> gap, ttft, prompt_ms, wall, cpu;
  for (int i = 0; i < n && !interrupted(); ++i) {
    const double c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    auto r = request(static_cast<size_t>(i));
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back((cpu_seconds() - c0) * 1e3);
    if (!r) {
      std::fprintf(stderr, "request %d: %s\n", i, r.error().message.c_str());
      continue;
    }
    if (r->ttft_s < 0 || std::isnan(r->server.prompt_ms)) continue;
    const double pm = r->server.prompt_ms;
    ttft.push_back(r->ttft_s * 1e3);
    prompt_ms.push_back(pm);
    gap.push_back(r->ttft_s * 1e3 - pm);
  }
  server->process.stop(5.0);
  std::printf("fidelity_bench: %s, %s, %d sequential streamed requests on loopback, flag %s\n", ctx->c.name.c_str(),
              ctx->runtime.how_found.c_str(), n, flag_value.c_str());
  print("client TTFT", ttft, "ms");
  print("server timings.prompt_ms", prompt_ms, "ms");
  print("gap: client TTFT - server prompt_ms", gap, "ms");
  print("request wall time (client)", wall, "ms");
  print("harness CPU time per request (user+sys)", cpu, "ms");
  std::remove(log.c_str());
  return 0;
}
