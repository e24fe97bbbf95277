#include "flow/passes/workload_summary.h"

#include <cstdio>
#include <map>

#include "flow/passes/figures.h"
#include "measure/goodput.h"
#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

// The runtime's own counts (usage) against the asked count; "" when every reported one matches.
std::string mismatch(const std::vector<int>& counts, int asked) {
  size_t off = 0;
  for (int n : counts) off += n >= 0 && n != asked;
  if (off == 0) return "";
  return std::to_string(off) + " of " + std::to_string(counts.size()) + " requests differ: " + count_histogram(counts);
}

}  // namespace

std::string count_histogram(const std::vector<int>& counts) {
  std::map<int, size_t> seen;
  for (int n : counts) ++seen[n];
  std::vector<std::string> parts;
  for (const auto& [n, k] : seen) parts.push_back((n < 0 ? std::string("not reported") : std::to_string(n)) + " in " + std::to_string(k));
  return join(parts, ", ") + " of " + std::to_string(counts.size()) + " requests";
}

WorkloadSummary summarize_workload(const CaseContext& ctx, const TimedPass& pooled) {
  WorkloadSummary out;
  const Case& c = ctx.c;
  if (!c.has_workload()) return out;
  auto line = [&](const std::string& k, const std::string& v) { out.lines.emplace_back(k, v); };
  std::vector<int> prompt_counts, output_counts;
  for (const auto& tr : pooled.requests) {
    prompt_counts.push_back(tr.result.prompt_tokens);
    output_counts.push_back(tr.result.completion_tokens);
  }

  // Prompt length.
  if (c.shape.prompt_tokens > 0) {
    const bool estimated = !ctx.adapter.tokenizer;
    line("prompt_tokens", std::to_string(c.shape.prompt_tokens) + " per request" +
                              (c.shape.synthetic_prompts > 0 ? " (" + std::to_string(c.shape.synthetic_prompts) + " synthetic prompts)" : "") +
                              ", counted by " + (ctx.prompts_counted_by.empty() ? std::string("nothing yet") : ctx.prompts_counted_by));
    line("prompt_tokens.server", count_histogram(prompt_counts) + " (the runtime's usage.prompt_tokens)");
    if (std::string m = mismatch(prompt_counts, c.shape.prompt_tokens); !m.empty()) {
      if (estimated) line("prompt_tokens.note", "the asked length is an estimate; the runtime counted otherwise: " + m);
      else out.failures.push_back("workload: asked " + std::to_string(c.shape.prompt_tokens) + " prompt tokens per request; " + m +
                                  " (the runtime's usage.prompt_tokens)");
    }
  } else {
    line("prompt_tokens", "as the prompt set is: " + count_histogram(prompt_counts) + " (the runtime's usage.prompt_tokens)");
  }

  // Output length.
  const std::string asked_out = std::to_string(c.shape.max_output_tokens);
  if (c.shape.exact_output && !ctx.adapter.exact_output.empty()) {
    line("output_tokens", asked_out + " per request, exact (" + ctx.adapter.exact_output.dump() + " and max_tokens)");
    if (std::string m = mismatch(output_counts, c.shape.max_output_tokens); !m.empty())
      out.failures.push_back("workload: asked " + asked_out + " output tokens per request; " + m + " (the runtime's usage.completion_tokens)");
  } else if (c.shape.exact_output) {
    line("output_tokens", asked_out + " per request asked, not enforced: the runtime data of " + ctx.adapter.name +
                              " names no exact_output fields (such as ignore_eos), answers may stop early");
  } else {
    line("output_tokens", "at most " + asked_out + " (max_tokens)");
  }
  line("output_tokens.server", count_histogram(output_counts) + " (the runtime's usage.completion_tokens)");

  // Load.
  if (!c.plan.concurrency.empty()) {
    std::vector<std::string> levels, requests;
    for (int level : c.plan.concurrency) {
      levels.push_back(std::to_string(level));
      requests.push_back("c" + std::to_string(level) + " " + std::to_string(level_requests(c, level, ctx.prompts.size())));
    }
    line("concurrency", join(levels, " ") + " (figures named c<level>.<figure>)");
    line("requests_per_round", join(requests, "; "));
    line("request_rate", c.plan.request_rate > 0
                             ? fmt("%g", c.plan.request_rate) + " requests/s, Poisson arrivals seeded by the case's seed " +
                                   std::to_string(c.seed) + ", the level bounding the requests in flight"
                             : std::string("all at once (no request_rate), the level bounding the requests in flight"));
  }

  // Targets.
  if (c.targets) {
    const LatencyTargets t = latency_targets(*c.targets);
    line("targets", t.text() + (c.targets->gate ? " (goodput_share gates)" : " (reported, not gated)"));
    std::map<int, std::vector<RequestLatency>> by_level;
    for (const auto& tr : pooled.requests) by_level[tr.level].push_back(request_latency(tr.result));
    for (const auto& [level, reqs] : by_level) {
      const Goodput g = goodput(reqs, t, 0);
      line(level > 0 ? "goodput.c" + std::to_string(level) : "goodput",
           std::to_string(g.good) + " of " + std::to_string(g.requests) + " requests met every target (" + fmt("%.1f", 100 * g.share) + "%)");
    }
  }
  return out;
}

}  // namespace fp
