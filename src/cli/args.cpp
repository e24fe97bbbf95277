#include "cli/args.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "util/text.h"

namespace fp {

bool Args::next() {
  if (i_ + 1 >= argc_) return false;
  given_ = arg_ = argv_[++i_];
  inline_value_.reset();
  const size_t eq = arg_.find('=');
  if (inline_values_ && starts_with(arg_, "--") && eq != std::string::npos) {
    inline_value_ = arg_.substr(eq + 1);
    arg_.resize(eq);
  }
  return true;
}

bool Args::has_value() const { return inline_value_ || i_ + 1 < argc_; }

std::string Args::value() {
  if (inline_value_) {
    std::string v = std::move(*inline_value_);
    inline_value_.reset();
    return v;
  }
  const std::string option = arg_;
  if (i_ + 1 >= argc_) usage_error(option + " needs a value");
  return argv_[++i_];
}

std::optional<std::string> Args::optional_value() {
  if (i_ + 1 >= argc_ || argv_[i_ + 1][0] == '-') return std::nullopt;
  return std::string(argv_[++i_]);
}

std::vector<std::string> Args::rest() {
  std::vector<std::string> out;
  while (i_ + 1 < argc_) out.push_back(argv_[++i_]);
  return out;
}

int Args::whole(long lo, long hi) {
  const std::string option = arg_;
  const std::string v = value();
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < lo || n > hi)
    usage_error(option + " " + quote(v) + ": expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(n);
}

double Args::number(double lo, double hi, const std::string& meaning) {
  const std::string option = arg_;
  const std::string v = value();
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(x >= lo && x <= hi)) {
    std::ostringstream m;
    m << option << " " << quote(v) << ": expected a number from " << lo << " to " << hi;
    if (!meaning.empty()) m << " (" << meaning << ")";
    usage_error(m.str());
  }
  return x;
}

void Args::usage_error(const std::string& message) const { std::exit(print_usage_error(message)); }

void Args::brief_usage_error(const std::string& message) const {
  std::cerr << "flashproof " << command_ << ": " << message << "\n";
  std::exit(kUsageExit);
}

int Args::print_usage_error(const std::string& message) const {
  std::cerr << "flashproof " << command_ << ": " << message << "\n" << usage_;
  return kUsageExit;
}

}  // namespace fp
