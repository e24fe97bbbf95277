#include "measure/signed_rank.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fp {

double signed_rank_p_above(const std::vector<double>& x, double bound) {
  struct Dev {
    double mag;
    bool above;
  };
  std::vector<Dev> dev;
  for (double v : x) {
    if (!std::isfinite(v)) continue;
    const double d = v - bound;
    if (std::fabs(d) <= 1e-12) continue;
    dev.push_back({std::fabs(d), d > 0});
  }
  const size_t n = dev.size();
  if (n == 0) return 1.0;
  std::sort(dev.begin(), dev.end(), [](const Dev& a, const Dev& b) { return a.mag < b.mag; });
  // Doubled mid-ranks, so that tied ranks (k + 0.5) stay integers.
  std::vector<int> rank2(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && dev[j + 1].mag - dev[i].mag <= 1e-12 * std::max(1.0, dev[i].mag)) ++j;
    const int r2 = static_cast<int>(i + 1 + j + 1);  // 2 * the mean of ranks i+1 .. j+1
    for (size_t k = i; k <= j; ++k) rank2[k] = r2;
    i = j + 1;
  }
  int observed = 0, total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += rank2[i];
    if (dev[i].above) observed += rank2[i];
  }
  // ways[s]: sign patterns whose positive doubled ranks sum to s, as a share of all 2^n (halved per
  // value: no overflow for any n).
  std::vector<double> ways(static_cast<size_t>(total) + 1, 0.0);
  ways[0] = 1.0;
  int reach = 0;
  for (size_t i = 0; i < n; ++i) {
    const int r = rank2[i];
    reach += r;
    for (int s = reach; s >= 0; --s) ways[static_cast<size_t>(s)] = 0.5 * (ways[static_cast<size_t>(s)] + (s >= r ? ways[static_cast<size_t>(s - r)] : 0.0));
  }
  double p = 0;
  for (int s = observed; s <= total; ++s) p += ways[static_cast<size_t>(s)];
  return std::min(1.0, p);
}

double signed_rank_smallest_p(int n) { return n <= 0 ? 1.0 : std::ldexp(1.0, -n); }

}  // namespace fp
