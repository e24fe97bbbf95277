// How busy the rest of the machine was while a launch was timed: the share of the machine's CPU
// time (all CPUs over the window) that went to processes other than the runtime and flashproof
// itself, from /proc/stat's busy time less the runtime's and our own CPU time. A nightly golden
// comparison uses it to tell a slower build from a busier machine (golden/compare.h: a host-clock
// figure is not judged on a night much busier than the golden's). (The kernel's CPU pressure stall
// share is no use here: on 2 CPUs the runtime's own threads and the client keep it near 100%.)
#pragma once

#include <optional>
#include <string_view>

namespace fp {

// Busy seconds of all CPUs (user + nice + system + irq + softirq + steal) from the text of
// /proc/stat's first line; nullopt when it has none.
std::optional<double> busy_cpu_seconds(std::string_view proc_stat_text);
// The same, read now.
std::optional<double> busy_cpu_seconds();
// flashproof's own CPU time (user + system), seconds.
double own_cpu_seconds();

// (machine busy - runtime - own) / (wall x cpus), clamped to 0..1.
double other_load_share(double machine_busy_s, double runtime_s, double own_s, double wall_s, int cpus);

}  // namespace fp
