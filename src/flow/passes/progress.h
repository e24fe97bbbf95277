// Progress of a long run, for the person waiting on it. On a terminal: one status line rewritten in
// place (case, phase, repetition, elapsed), refreshed while a phase is silent. In CI ($CI set) or
// when stderr is not a terminal: plain lines, one per phase (repetitions at most every 30 s), no
// control characters, so logs stay readable and diffable. --quiet: nothing.
// $FLASHPROOF_PROGRESS=terminal|lines|quiet overrides the choice.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace fp {

enum class ProgressStyle { Terminal, Lines, Quiet };
const char* to_string(ProgressStyle s);

// The rule above as a pure function: `override_value` is $FLASHPROOF_PROGRESS, `ci` is $CI (either
// may be null). An unknown override is ignored.
ProgressStyle choose_progress_style(bool quiet, bool stderr_is_tty, const char* ci, const char* override_value);
// The same, from this process's stderr and environment.
ProgressStyle detect_progress_style(bool quiet);

// One plain progress line on stderr, "[who] msg", unless quiet: the engines that run two arms (the
// paired engine, A/B) say their phases this way.
void progress_line(bool quiet, const std::string& who, const std::string& msg);

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  // `width`: the terminal's columns (Terminal style; 0: ask the terminal); the line is cut to fit.
  Progress(ProgressStyle style, std::ostream& out, size_t width = 0);
  ~Progress();  // ends the status line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // A new phase of `case_name` ("evidence pass", "timed runs"); resets the repetition.
  void phase(const std::string& case_name, const std::string& what);
  // Repetition `done` of `total` within the phase (`label`: "warm-up", "round").
  void repetition(const std::string& label, int done, int total);
  // Clears the status line, so other output can follow on a clean line.
  void finish();

  // What the status line / a line would show now (tests).
  std::string status_text() const;

 private:
  void draw_locked();
  void ticker();
  ProgressStyle style_;
  std::ostream& out_;
  size_t width_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread ticker_;
  bool stop_ = false, drawn_ = false;
  std::string case_, phase_, rep_label_;
  int rep_done_ = 0, rep_total_ = 0;
  Clock::time_point case_start_ = Clock::now(), last_line_ = Clock::now();
};

// The progress of the case being run in this process, for passes deep in the flow (timed repetitions)
// to report to without a parameter; null when none (A/B mode, tests): every call is then a no-op.
Progress* current_progress();

// Makes `p` current for its lifetime (case_runner sets one per case).
class ScopedProgress {
 public:
  explicit ScopedProgress(Progress* p);
  ~ScopedProgress();
  ScopedProgress(const ScopedProgress&) = delete;
  ScopedProgress& operator=(const ScopedProgress&) = delete;

 private:
  Progress* previous_;
};

// Reports a repetition to the current progress, if any.
void progress_repetition(const std::string& label, int done, int total);

}  // namespace fp
