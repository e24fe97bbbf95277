#include "flow/passes/progress.h"

#include <iostream>

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fp {
namespace {

Progress* g_current = nullptr;

std::string seconds_text(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

}  // namespace

const char* to_string(ProgressStyle s) {
  switch (s) {
    case ProgressStyle::Terminal: return "terminal";
    case ProgressStyle::Lines: return "lines";
    case ProgressStyle::Quiet: return "quiet";
  }
  return "?";
}

ProgressStyle choose_progress_style(bool quiet, bool stderr_is_tty, const char* ci, const char* override_value) {
  if (quiet) return ProgressStyle::Quiet;
  if (override_value) {
    if (!std::strcmp(override_value, "terminal")) return ProgressStyle::Terminal;
    if (!std::strcmp(override_value, "lines")) return ProgressStyle::Lines;
    if (!std::strcmp(override_value, "quiet")) return ProgressStyle::Quiet;
  }
  const bool in_ci = ci && *ci && std::strcmp(ci, "0") != 0 && std::strcmp(ci, "false") != 0;
  return stderr_is_tty && !in_ci ? ProgressStyle::Terminal : ProgressStyle::Lines;
}

ProgressStyle detect_progress_style(bool quiet) {
  return choose_progress_style(quiet, isatty(STDERR_FILENO) == 1, std::getenv("CI"), std::getenv("FLASHPROOF_PROGRESS"));
}

Progress::Progress(ProgressStyle style, std::ostream& out, size_t width) : style_(style), out_(out), width_(width) {
  if (style_ == ProgressStyle::Terminal) {
    struct winsize ws {};
    if (width_ == 0 && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10) width_ = ws.ws_col;
    if (width_ == 0) width_ = 100;
    ticker_ = std::thread([this] { ticker(); });
  }
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  finish();
}

std::string Progress::status_text() const {
  std::string s = "[" + case_ + "] " + phase_;
  if (rep_total_ > 0) s += ": " + rep_label_ + " " + std::to_string(rep_done_) + "/" + std::to_string(rep_total_);
  s += " (" + seconds_text(std::chrono::duration<double>(Clock::now() - case_start_).count()) + ")";
  return s;
}

void Progress::draw_locked() {
  if (style_ != ProgressStyle::Terminal) return;
  std::string s = status_text();
  if (s.size() > width_ - 1) s = s.substr(0, width_ - 4) + "...";
  out_ << "\r\033[K" << s << std::flush;
  drawn_ = true;
}

void Progress::phase(const std::string& case_name, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (style_ == ProgressStyle::Quiet) return;
  if (case_name != case_) case_start_ = Clock::now();
  case_ = case_name;
  phase_ = what;
  rep_label_.clear();
  rep_done_ = rep_total_ = 0;
  if (style_ == ProgressStyle::Lines) {
    out_ << status_text() << std::endl;
    last_line_ = Clock::now();
    return;
  }
  // A finished phase stays on screen as a line of its own; the next one is drawn below it.
  if (drawn_) out_ << "\n";
  drawn_ = false;
  draw_locked();
}

void Progress::repetition(const std::string& label, int done, int total) {
  std::lock_guard<std::mutex> lock(mu_);
  if (style_ == ProgressStyle::Quiet) return;
  rep_label_ = label;
  rep_done_ = done;
  rep_total_ = total;
  if (style_ == ProgressStyle::Terminal) return draw_locked();
  // CI: a line now and then keeps a long phase visibly alive without flooding the log.
  if (Clock::now() - last_line_ >= std::chrono::seconds(30) || (done == total && total > 0 && label == "round")) {
    out_ << status_text() << std::endl;
    last_line_ = Clock::now();
  }
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (style_ == ProgressStyle::Terminal && drawn_) {
    out_ << "\n" << std::flush;
    drawn_ = false;
  }
}

void Progress::ticker() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(500));
    if (!stop_ && drawn_) draw_locked();
  }
}

Progress* current_progress() { return g_current; }

ScopedProgress::ScopedProgress(Progress* p) : previous_(g_current) { g_current = p; }
ScopedProgress::~ScopedProgress() { g_current = previous_; }

void progress_repetition(const std::string& label, int done, int total) {
  if (Progress* p = current_progress()) p->repetition(label, done, total);
}

void progress_line(bool quiet, const std::string& who, const std::string& msg) {
  if (!quiet) std::cerr << "[" << who << "] " << msg << std::endl;
}

}  // namespace fp
