#include "flow/passes/instrument_retry.h"

#include <chrono>
#include <csignal>
#include <thread>

#include "util/text.h"

namespace fp {

ExitInfo ended_by_itself(Process& p, double wait_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  ExitInfo e = p.runtime_end();
  while (!e.exited && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    e = p.runtime_end();
  }
  return e;
}

std::string LaunchEnd::how() const { return verb + (detail.empty() ? std::string() : " (" + detail + ")"); }

LaunchEnd classify_launch_failure(LaunchPhase phase, const ExitInfo& exit, bool not_ready, const std::string& error,
                                  const std::string& words) {
  LaunchEnd e;
  e.error = error;
  e.words = words;
  const std::string when = phase == LaunchPhase::Start     ? "before it was ready"
                           : phase == LaunchPhase::Prompts ? "while its prompts were measured"
                                                           : "during the evidence requests";
  if (exit.exited) {
    e.broke = true;
    e.verb = exit.signal == SIGABRT ? "aborts" : exit.signal ? "crashes" : "exits";
    e.detail = exit.describe() + ", " + when;
    return e;
  }
  if (phase == LaunchPhase::Start && not_ready) {
    e.broke = true;
    e.verb = "hangs";
    e.detail = "running, never ready";
    return e;
  }
  if (phase == LaunchPhase::Requests) {
    e.broke = true;
    e.verb = "fails the evidence requests";
    e.detail = "still running: hung or refused them";
    return e;
  }
  return e;  // not the runtime's breakage: the harness's or the input's (spawn failure, prompt fitting)
}

InstrumentSearch search_breaking_instruments(const std::vector<std::string>& order, const LaunchEnd& first,
                                             const std::function<LaunchEnd(const std::vector<std::string>& off)>& launch,
                                             const std::function<std::string(const std::string&)>& label) {
  InstrumentSearch s;
  std::vector<std::string> off;
  LaunchEnd last_broken = first;
  size_t culprit = order.size();
  auto step = [&](const std::vector<std::string>& without, const LaunchEnd& end) {
    std::vector<std::string> names;
    for (const auto& n : without) names.push_back(label(n));
    s.steps.push_back("launch " + std::to_string(s.extra_launches) + " without " + join(names, ", ") + ": " +
                      (end.broke ? "the runtime " + end.how() : std::string("completed")));
  };
  for (size_t i = 0; i < order.size(); ++i) {
    off.push_back(order[i]);
    const LaunchEnd end = launch(off);
    ++s.extra_launches;
    step(off, end);
    if (!end.broke) {
      culprit = i;
      break;
    }
    last_broken = end;
  }
  if (culprit == order.size()) {
    s.crashed_alone = true;
    s.alone = last_broken;
    s.off = off;
    return s;
  }
  s.off = off;
  s.broke_with[order[culprit]] = last_broken;
  if (culprit == 0) return s;
  // The ones taken off before the culprit broke nothing we know of: back on, the culprit alone off.
  const std::vector<std::string> only = {order[culprit]};
  const LaunchEnd back = launch(only);
  ++s.extra_launches;
  step(only, back);
  if (!back.broke) {
    s.off = only;
    return s;
  }
  for (size_t i = 0; i < culprit; ++i) s.broke_with[order[i]] = back;  // the run broke with them back on
  return s;
}

std::string instrument_off_text(const std::string& label, const std::string& how_on, const LaunchEnd& end) {
  return label + " taken off: the runtime " + end.verb + " with " + how_on + " on this case" +
         (end.detail.empty() ? std::string() : " (" + end.detail + ")") + (end.words.empty() ? std::string() : ": " + end.words);
}

}  // namespace fp
