// When the evidence pass breaks the runtime it observes (it dies, is never ready, or fails the
// evidence requests while an instrument is on: issue 25, ggml-vulkan's perf logger aborting a partly
// offloaded run), which instrument did it: the pass runs again with the instruments taken off one at
// a time, in the order flow/passes/instruments.h lists them (the most recently added and most intrusive
// first), each launch keeping the ones taken off before it off, until a launch completes:
//   - the instrument taken off last is the one that broke the run; its levels are unavailable, with
//     the runtime's own words;
//   - the instruments taken off before it were taken off without proof: one more launch puts them
//     back (only the culprit off); if that launch breaks too they stay off, with its words;
//   - when every instrument is off and the run still breaks, the runtime crashed on its own: a
//     failure of its own, never a fallback.
// Extra launches: k (the culprit's place in the order) plus one when k > 1; n (the number of
// instruments) for a runtime that crashes with none. The common case, the first instrument, costs one.
// The probed check (flow/passes/probed_check.h) needs no extra launch: its only instrument is the probe,
// and the timed runs just ran the same launch without it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/process.h"

namespace fp {

// How one launch ended, as the retry sees it.
struct LaunchEnd {
  bool broke = false;   // died, never ready, or failed the evidence requests while running
  std::string verb;     // "aborts", "crashes", "exits", "hangs", "fails the evidence requests"
  std::string detail;   // "killed by signal 6 (Aborted), during the evidence requests"
  std::string words;    // the runtime's own last words (evidence/instrument_rules.h last_words)
  std::string error;    // the whole failure message, with the log's tail
  std::string how() const;  // "aborts (killed by signal 6 (Aborted), during the evidence requests)"
};

// What ended a launch that did not complete, for classify_launch_failure.
enum class LaunchPhase {
  Start,     // start_server: died before it was ready, or not ready in time
  Prompts,   // fitting the prompts to their token length against the running runtime
  Requests,  // the evidence requests
};

// Whether a failed launch broke the runtime. `exit`: how the process ended when it ended by itself
// (exited = false: it was still running when stopped); `not_ready`: start_server's wait ran out. A
// runtime that died is broken in any phase; one still running is broken when it was never ready or
// failed the evidence requests (hung, refused, closed the connection), not when fitting the prompts
// failed (the prompt set's fault, and the same in every launch).
LaunchEnd classify_launch_failure(LaunchPhase phase, const ExitInfo& exit, bool not_ready, const std::string& error,
                                  const std::string& words);

// How a process ended when it ends by itself within `wait_s` (a runtime that aborts closes its
// connections as it dies and is reaped a moment later: called after a failed request); exited =
// false when it is still running then.
ExitInfo ended_by_itself(Process& p, double wait_s = 2.0);

// What the search found.
struct InstrumentSearch {
  std::vector<std::string> off;                     // instruments left off in the launch that is kept
  std::map<std::string, LaunchEnd> broke_with;      // each of them: the launch that broke while it was on
  int extra_launches = 0;
  std::vector<std::string> steps;                   // one line per extra launch, in order
  bool crashed_alone = false;                       // broke with every instrument off
  LaunchEnd alone;                                  // that launch
};

// Runs the search. `order`: the instruments that were on, in the order to take them off; `first`:
// how the launch with all of them ended (broke); `launch(off)` runs the pass with the instruments in
// `off` taken off and says how it ended. With `order` empty nothing is launched and the runtime
// crashed on its own. Labels name the instruments in `steps` (flow/passes/instruments.h Instrument::label).
InstrumentSearch search_breaking_instruments(const std::vector<std::string>& order, const LaunchEnd& first,
                                             const std::function<LaunchEnd(const std::vector<std::string>& off)>& launch,
                                             const std::function<std::string(const std::string&)>& label);

// One instrument taken off, as the levels it served report it: "device timings taken off: the
// runtime aborts with GGML_VK_PERF_LOGGER=1 on this case: <words>".
std::string instrument_off_text(const std::string& label, const std::string& how_on, const LaunchEnd& end);

}  // namespace fp
