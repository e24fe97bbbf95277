#include "flow/paired/alternation.h"

#include <chrono>

namespace fp {

Alternation::Alternation() {
  for (int p = 0; p < 2; ++p) {
    parties_[static_cast<size_t>(p)].alt = this;
    parties_[static_cast<size_t>(p)].index = p;
  }
}

int Alternation::nth(long n) { return static_cast<int>(n % 2); }

void Alternation::advance() {
  ++step_;
  // Skip the steps of a party that has left (at most one: both gone means nobody waits).
  if (!(left_[0] && left_[1]))
    while (left_[static_cast<size_t>(nth(step_))]) ++step_;
}

double Alternation::Party::begin() {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(alt->m_);
  alt->cv_.wait(lock, [this] { return nth(alt->step_) == index || alt->left_[static_cast<size_t>(1 - index)]; });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Alternation::Party::end() {
  std::lock_guard<std::mutex> lock(alt->m_);
  if (nth(alt->step_) == index) alt->advance();
  alt->cv_.notify_all();
}

void Alternation::Party::leave() {
  std::lock_guard<std::mutex> lock(alt->m_);
  alt->left_[static_cast<size_t>(index)] = true;
  if (nth(alt->step_) == index) alt->advance();
  alt->cv_.notify_all();
}

}  // namespace fp
