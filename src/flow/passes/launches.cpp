#include "flow/passes/launches.h"

#include <algorithm>
#include <functional>

#include "flow/passes/figures.h"

namespace fp {

std::string launch_dir(const std::string& run_dir, int index) {
  return index <= 1 ? run_dir : run_dir + "/launch-" + std::to_string(index);
}

TimedPass pooled_pass(const std::vector<TimedPass>& passes) {
  TimedPass out;
  if (passes.empty()) return out;
  const TimedPass& first = passes.front();
  out.argv = first.argv;
  out.log_path = first.log_path;
  out.ready_s = first.ready_s;
  out.cold_first = first.cold_first;
  out.cold_first_prompt = first.cold_first_prompt;
  out.gpu_memory = first.gpu_memory;
  int offset = 0;
  for (const TimedPass& p : passes) {
    int rounds = static_cast<int>(p.round_wall_s.size());
    for (const TimedRequest& tr : p.requests) {
      TimedRequest moved = tr;
      moved.round += offset;
      out.requests.push_back(std::move(moved));
      rounds = std::max(rounds, tr.round + 1);
    }
    if (!p.round_wall_s.empty() || !out.round_wall_s.empty()) {
      // Keep round i's wall at index i of the pooled rounds (a round without a wall counts none).
      out.round_wall_s.resize(static_cast<size_t>(offset), 0.0);
      out.round_wall_s.insert(out.round_wall_s.end(), p.round_wall_s.begin(), p.round_wall_s.end());
      out.round_wall_s.resize(static_cast<size_t>(offset + rounds), 0.0);
    }
    offset += rounds;
    if (p.peak_rss_bytes && (!out.peak_rss_bytes || *p.peak_rss_bytes > *out.peak_rss_bytes))
      out.peak_rss_bytes = p.peak_rss_bytes;
    out.errors.insert(out.errors.end(), p.errors.begin(), p.errors.end());
  }
  return out;
}

namespace {

std::vector<FigureResult> pooled_with_launch_medians(const std::vector<TimedPass>& passes,
                                                     const std::function<std::vector<FigureResult>(const TimedPass&)>& figures) {
  std::vector<FigureResult> pooled = figures(pooled_pass(passes));
  for (const TimedPass& p : passes)
    for (const FigureResult& f : figures(p))
      for (FigureResult& g : pooled)
        if (g.name == f.name) g.launch_medians.push_back(f.summary.median);
  return pooled;
}

}  // namespace

std::vector<FigureResult> launch_figures(Job job, const std::vector<TimedPass>& passes) {
  return pooled_with_launch_medians(passes, [job](const TimedPass& p) { return compute_figures(job, p); });
}

std::vector<FigureResult> launch_figures(const Case& c, const std::vector<TimedPass>& passes) {
  return pooled_with_launch_medians(passes, [&c](const TimedPass& p) { return case_figures(c, p); });
}

}  // namespace fp
