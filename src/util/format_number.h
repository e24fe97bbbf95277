// Numbers and percents as flashproof prints them: one formatter of each kind, one rule for a value
// that is not a finite number.
#pragma once

#include <string>
#include <string_view>

namespace fp {

// The rule for a value that is not a finite number (never measured, a ratio over zero): a number
// prints as kNoNumberText, a relative change as kNoPercentText, never printf's "nan"/"inf". A caller
// whose format needs another word passes it (a result file writes "nan", which its reader takes back).
inline constexpr std::string_view kNoNumberText = "-";
inline constexpr std::string_view kNoPercentText = "n/a";

// One number through a printf format: fmt("%.0f", 12.4) == "12".
std::string fmt(const char* printf_format, double v, std::string_view non_finite = kNoNumberText);

// Fixed decimals: fixed(1.23456, 3) == "1.235".
std::string fixed(double v, int decimals, std::string_view non_finite = kNoNumberText);

// Significant digits, printf's %g: significant(1234567, 6) == "1.23457e+06".
std::string significant(double v, int digits, std::string_view non_finite = kNoNumberText);

// A figure for people: 3 significant digits, no exponent for everyday sizes ("1234", "123.4",
// "12.34", "0.0123").
std::string readable(double v);

// A figure in a table of medians: 3 decimals, 1 from 1000 on ("0.123", "1234.5").
std::string table_figure(double v);

// A relative change as a signed percent with one decimal: pct(0.1234) == "+12.3%".
std::string pct(double rel, std::string_view non_finite = kNoPercentText);

// A relative change as a percent of `digits` significant digits, whole from 10^(digits-1) % on:
// significant_pct(0.01234, 3) == "1.23%", significant_pct(12.345, 3) == "1234%".
std::string significant_pct(double rel, int digits, std::string_view non_finite = kNoPercentText);

}  // namespace fp
