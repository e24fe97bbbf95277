#include "util/min_effect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fp {
namespace {

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

double MinEffect::absolute_at(double reference) const {
  if (!std::isfinite(reference)) return floor;
  return std::max(relative * std::fabs(reference), floor);
}

double MinEffect::relative_at(double reference) const {
  const double m = std::fabs(reference);
  if (!(m > 0) || !std::isfinite(m)) return relative;
  return std::max(relative, floor / m);
}

bool MinEffect::floor_in_force(double reference) const {
  return floor > 0 && std::isfinite(reference) && floor > relative * std::fabs(reference);
}

std::string MinEffect::text() const {
  if (!known()) return "unknown";
  std::string s = number_text(100.0 * relative) + "%";
  if (floor > 0) s += ", floor " + number_text(floor);
  return s;
}

bool MinEffect::known() const { return std::isfinite(relative) && relative > 0 && std::isfinite(floor) && floor >= 0; }

bool operator==(const MinEffect& a, const MinEffect& b) { return a.relative == b.relative && a.floor == b.floor; }

}  // namespace fp
