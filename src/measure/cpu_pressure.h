// How busy the machine was while a launch was timed: Linux's pressure stall information for the CPU
// (/proc/pressure/cpu, "some" line): the share of wall time in which at least one runnable task
// waited for a CPU. A nightly golden comparison uses it to tell a slower build from a busier machine
// (golden/compare.h: a host-clock figure is not judged on a night much busier than the golden's).
#pragma once

#include <optional>
#include <string_view>

namespace fp {

// The "some" line's total (microseconds stalled since boot) from the text of /proc/pressure/cpu;
// nullopt when it has none.
std::optional<double> cpu_pressure_total_us(std::string_view pressure_text);
// The same, read now; nullopt without PSI (an older kernel, or psi=0 on its command line).
std::optional<double> cpu_pressure_total_us();

// Stall microseconds over wall microseconds between two readings, clamped to 0..1.
double cpu_pressure_share(double total_before_us, double total_after_us, double wall_s);

}  // namespace fp
