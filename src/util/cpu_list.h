// CPU lists as Linux writes them (cpuset(7) "list format", taskset -c): "0-3,8,10-11".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace fp {

// Sorted, without repeats. An error names the bad item: empty list, not a number, a range that runs
// backwards, or a CPU at or beyond `cpu_count` (> 0: this machine's CPUs).
Result<std::vector<int>> parse_cpu_list(std::string_view text, int cpu_count);

// The list format back: {0, 1, 2, 5} -> "0-2,5".
std::string cpu_list_text(const std::vector<int>& cpus);

}  // namespace fp
