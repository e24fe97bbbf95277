// detection_power_bench: how small a real slowdown the A/B verdict (measure/ab_stats.h compare_ab:
// bootstrap CI excludes 0 AND Mann-Whitney p < 0.05) detects on this machine with the real runtime,
// and how often it raises a false alarm on identical arms, for a given number of samples per arm.
//
// Method (bench/README.md has the reasoning and the recorded figures):
//  - Two runtimes of the case, launched identically (flag on, quiet logging), both alive; requests
//    alternate A, B, A, B ... one at a time, so drift of the machine falls on both.
//  - A real slowdown in arm B: its prompts carry extra text (padding levels, characters appended to
//    the last user turn), so the server has more prompt to process. Level 0 is identical arms.
//    One more row: arm B launched with fewer threads (-t 1 instead of -t 2).
//  - The figure is the per-request time to first token (the chat job's gate figure).
//  - For each level, P interleaved pairs are collected; each trial takes R consecutive pairs (not a
//    random resample: consecutive samples keep the machine's real autocorrelation), so there are
//    P / R trials per R. Detection rate = trials with verdict "different" and B slower; false alarm
//    rate (level 0) = trials with verdict "different" either way. The true slowdown of a level is
//    median(B) / median(A) - 1 over all its P pairs.
// usage: detection_power_bench [CASE.json] [PAIRS] [MAX_TOKENS] [all|one]
//   (defaults: cases/chat-tiny-short.json 200 2 all; "one": every request uses the case's first prompt,
//    so the spread is the machine's alone, not the mix of prompt lengths)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flow/ab/ab_runner.h"
#include "flow/passes/request_builder.h"
#include "measure/ab_stats.h"
#include "measure/stats.h"
#include "runtime/launcher.h"
#include "runtime/process.h"

namespace {

using namespace fp;

Result<RunningServer> launch(const CaseContext& ctx, const std::string& tag, const std::vector<std::string>& replace_threads) {
  FP_TRY(int port, free_loopback_port());
  auto argv = expand_argv(ctx.c, ctx.runtime, ctx.model_path, port, ctx.c.flag.on, ctx.adapter.timed_args);  // flag on
  if (!replace_threads.empty())
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == "-t") argv[i + 1] = replace_threads[0];
  LaunchSpec spec{argv, ctx.c.launch.env, "/tmp/detection_power_bench-" + std::to_string(getpid()) + "-" + tag + ".log", port,
                  ctx.c.plan.ready_timeout_s};
  return start_server(spec, ctx.adapter);
}

Prompt padded(Prompt p, size_t chars) {
  if (chars == 0) return p;
  static const std::string filler =
      "The quick brown fox jumps over the lazy dog while the operator checks the logs once more. ";
  std::string extra;
  while (extra.size() < chars) extra += filler;
  extra.resize(chars);
  p.messages.back().content += "\n" + extra;
  return p;
}

double ttft_ms(const CaseContext& ctx, const RunningServer& srv, const Prompt& p, int max_tokens) {
  auto r = stream_request(build_request(ctx, srv.base_url, p, max_tokens, 60));
  if (!r || r->ttft_s < 0) return -1;
  return r->ttft_s * 1e3;
}

struct Level {
  std::string name;
  std::vector<double> a, b;
};

Level collect(const CaseContext& ctx, const RunningServer& sa, const RunningServer& sb, size_t pad, int pairs, int max_tokens,
              const std::string& name) {
  Level l;
  l.name = name;
  for (int i = 0; i < pairs && !interrupted(); ++i) {
    const Prompt& p = ctx.prompts[static_cast<size_t>(i) % ctx.prompts.size()];
    // Alternate which arm goes first within a pair, so neither always follows the other.
    double a, b;
    if (i % 2 == 0) {
      a = ttft_ms(ctx, sa, p, max_tokens);
      b = ttft_ms(ctx, sb, padded(p, pad), max_tokens);
    } else {
      b = ttft_ms(ctx, sb, padded(p, pad), max_tokens);
      a = ttft_ms(ctx, sa, p, max_tokens);
    }
    if (a > 0 && b > 0) {
      l.a.push_back(a);
      l.b.push_back(b);
    }
  }
  return l;
}

void report(const Level& l, const std::vector<int>& reps) {
  const double slow = median(l.b) / median(l.a) - 1.0;
  std::printf("%-26s %8.3f %8.3f %+9.1f%%", l.name.c_str(), median(l.a), median(l.b), 100.0 * slow);
  for (int r : reps) {
    const size_t trials = l.a.size() / static_cast<size_t>(r);
    size_t slower = 0, any = 0;
    for (size_t t = 0; t < trials; ++t) {
      std::vector<double> a(l.a.begin() + static_cast<long>(t * r), l.a.begin() + static_cast<long>((t + 1) * r));
      std::vector<double> b(l.b.begin() + static_cast<long>(t * r), l.b.begin() + static_cast<long>((t + 1) * r));
      AbResult c = compare_ab(a, b);
      if (c.verdict == AbVerdict::different) {
        ++any;
        if (c.diff > 0) ++slower;
      }
    }
    char cell[48];
    std::snprintf(cell, sizeof cell, "%zu/%zu slower, %zu/%zu any", slower, trials, any, trials);
    std::printf("  | R=%-3d %-24s", r, cell);
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string case_path = argc > 1 ? argv[1] : std::string(FLASHPROOF_SOURCE_DIR) + "/cases/chat-tiny-short.json";
  const int pairs = argc > 2 ? std::atoi(argv[2]) : 200;
  const int max_tokens = argc > 3 ? std::atoi(argv[3]) : 2;
  const bool one_prompt = argc > 4 && std::string(argv[4]) == "one";
  install_child_cleanup_handlers();
  auto ctx = resolve_case_context(case_path, *load_suite(FLASHPROOF_SOURCE_DIR));
  if (!ctx) {
    std::fprintf(stderr, "detection_power_bench: %s\n", ctx.error().message.c_str());
    return ctx.exit_code();
  }
  if (one_prompt) ctx->prompts.resize(1);
  auto sa = launch(*ctx, "a", {});
  auto sb = launch(*ctx, "b", {});
  if (!sa || !sb) {
    std::fprintf(stderr, "detection_power_bench: %s\n", (!sa ? sa : sb).error().message.c_str());
    return 2;
  }
  for (const auto& p : ctx->prompts) (void)ttft_ms(*ctx, *sa, p, max_tokens), (void)ttft_ms(*ctx, *sb, p, max_tokens);
  const std::vector<int> reps = {5, 10, 20};
  std::printf("detection_power_bench: %s, figure ttft_ms per request, %d interleaved pairs per level, max_tokens %d, prompts: %s\n",
              ctx->c.name.c_str(), pairs, max_tokens, one_prompt ? ctx->prompts.front().id.c_str() : "all of the case's, in turn");
  std::printf("%-26s %8s %8s %10s  | per R (samples per arm): trials with verdict 'different' (B slower / either way)\n",
              "arm B", "A p50", "B p50", "slowdown");
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t pad : {0, 0, 16, 32, 64, 128, 256, 512}) {
    static int zero_seen = 0;
    std::string name = pad == 0 ? "identical" + std::string(zero_seen++ ? " (again)" : "") : "+" + std::to_string(pad) + " prompt chars";
    report(collect(*ctx, *sa, *sb, pad, pairs, max_tokens, name), reps);
    if (interrupted()) break;
  }
  sb->process.stop(5.0);
  auto sc = launch(*ctx, "c", {"1"});
  if (sc && !interrupted()) {
    (void)ttft_ms(*ctx, *sc, ctx->prompts.front(), max_tokens);
    report(collect(*ctx, *sa, *sc, 0, pairs, max_tokens, "-t 1 instead of -t 2"), reps);
    sc->process.stop(5.0);
  }
  sa->process.stop(5.0);
  std::printf("wall %.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}
