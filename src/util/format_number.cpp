#include "util/format_number.h"

#include <cmath>
#include <cstdio>

namespace fp {

std::string fmt(const char* printf_format, double v, std::string_view non_finite) {
  if (!std::isfinite(v)) return std::string(non_finite);
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

std::string fixed(double v, int decimals, std::string_view non_finite) {
  if (!std::isfinite(v)) return std::string(non_finite);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string significant(double v, int digits, std::string_view non_finite) {
  if (!std::isfinite(v)) return std::string(non_finite);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string readable(double v) {
  const double a = std::fabs(v);
  if (a >= 1000) return fixed(v, 0);
  if (a >= 100) return fixed(v, 1);
  if (a >= 1) return fixed(v, 2);
  return significant(v, 3);
}

std::string table_figure(double v) { return fixed(v, std::fabs(v) >= 1000 ? 1 : 3); }

std::string pct(double rel, std::string_view non_finite) { return fmt("%+.1f%%", 100.0 * rel, non_finite); }

std::string significant_pct(double rel, int digits, std::string_view non_finite) {
  const double v = 100.0 * rel;
  if (!std::isfinite(v)) return std::string(non_finite);
  return (std::fabs(v) >= std::pow(10.0, digits - 1) ? fixed(v, 0) : significant(v, digits)) + "%";
}

}  // namespace fp
