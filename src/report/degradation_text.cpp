#include "report/degradation_text.h"

#include "util/format_number.h"
#include "util/text.h"

namespace fp {

std::string degradation_text(const Degradation& d) {
  std::string out = "active, degraded: " + d.cause;
  if (!d.quote.empty()) out += " (the runtime: " + quote(d.quote) + ")";
  if (!d.kernels_say.empty()) out += "; kernels: " + d.kernels_say;
  if (d.conversion_share) {
    out += "; cost: converting the KV cache " + fixed(*d.conversion_share * 100, 1) + "% of GPU time" +
           (d.conversion_kernels.empty() ? "" : " (" + d.conversion_kernels.front() + ")");
  } else {
    out += "; cost not measured (no kernel tally: the conversion kernels' share of GPU time needs level 3)";
  }
  return out + ". Remedy: " + d.remedy;
}

}  // namespace fp
