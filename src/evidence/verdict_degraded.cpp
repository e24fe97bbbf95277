// "Active, degraded": the fused path ran on data the runtime converted first. The runtime's own line
// (a log rule of kind degraded) says so; so do the kernels, when the fused kernels read another K/V
// type than the cache holds while conversion kernels of the cache's type ran beside them. The
// conversion kernels' share of GPU time is the cost, measured.
#include <algorithm>

#include "evidence/kernel_set.h"
#include "evidence/verdict.h"
#include "evidence/verdict_levels.h"
#include "util/text.h"

namespace fp::verdict_detail {
namespace {

// The build's pairs as the remedy names them.
std::string compiled_pairs_words(const Degradation& d) {
  if (d.all_pairs_compiled) return "every pair";
  if (d.compiled_pairs.empty()) return "the build does not list them";
  return join(d.compiled_pairs, ", ");
}

std::string fill(std::string text, const Degradation& d, int head_size) {
  const std::pair<const char*, std::string> keys[] = {{"{head_size}", std::to_string(head_size)},
                                                      {"{k_type}", d.k_type},
                                                      {"{v_type}", d.v_type},
                                                      {"{to_type}", d.converted_to.empty() ? "another type" : d.converted_to},
                                                      {"{compiled_pairs}", compiled_pairs_words(d)}};
  for (const auto& [key, value] : keys)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, std::string(key).size(), value);
  return text;
}

// Conversion kernels of the cache's own K or V type ran.
bool converts_cache_types(const KernelSummary& k, const KvTotal& kv) {
  return std::any_of(k.conversion_types.begin(), k.conversion_types.end(),
                     [&](const std::string& t) { return t == kv.k_type || t == kv.v_type; });
}

// Level 3's view: the fused kernels read other types than the cache's, and conversion kernels of the
// cache's own types ran beside them (a compiled quantized pair converts for prefill too, but its
// vector kernel reads the cache's own types). "" when the kernels do not show it.
std::string kernels_show_conversion(const KernelSummary& k, const KvTotal& kv) {
  if (k.fused_kv_types.empty() || kv.k_type.empty() || kv.v_type.empty()) return "";
  const std::string cache = kv.k_type + "-" + kv.v_type;
  if (std::find(k.fused_kv_types.begin(), k.fused_kv_types.end(), cache) != k.fused_kv_types.end()) return "";
  const bool converts = converts_cache_types(k, kv);
  if (!converts) return "";
  return "fused kernels read " + join(k.fused_kv_types, ", ") + " while the KV cache holds " + cache +
         ", beside kernels converting " + join(k.conversion_types, ", ");
}

// Level 3's view for a head size the vector kernel lacks: no vector kernel ran, only kernels that read
// a fixed pair (mma, tile: f16), beside conversion kernels of the cache's own types. A compiled pair at
// a head size the vector kernel covers converts for prefill and large batches too: that is not said.
std::string kernels_show_head_size_conversion(const KernelSummary& k, const KvTotal& kv, int head_size, const KernelDegradation& rule) {
  if (!k.fused_kv_types.empty() || k.fused_reads_kv.empty() || head_size <= 0 || kv.k_type.empty() || kv.v_type.empty()) return "";
  const auto& sizes = rule.vector_head_sizes;
  if (std::find(sizes.begin(), sizes.end(), head_size) != sizes.end()) return "";
  const bool converts = converts_cache_types(k, kv);
  if (!converts) return "";
  return "fused kernels read only " + join(k.fused_reads_kv, ", ") + " (no vector kernel ran: head size " + std::to_string(head_size) +
         ") while the KV cache holds " + kv.k_type + "-" + kv.v_type + ", beside kernels converting " + join(k.conversion_types, ", ");
}

}  // namespace

void find_degradation(const VerdictInput& in, Verdict& v) {
  if (v.activity != Activity::Active || !in.log) return;
  Degradation d;
  std::string cause = in.degraded_cause, remedy = in.degraded_remedy;
  if (!in.log->degraded.empty()) {
    const DegradedLine& l = in.log->degraded.front();
    d.k_type = l.k_type;
    d.v_type = l.v_type;
    d.converted_to = l.to_type;
    d.quote = quoted_with_process(l.quote);
    d.line = l.quote.line;
    cause = l.cause;
    remedy = l.remedy;
  }
  const auto kv = in.log->kv_total();
  if (in.kernels && in.kernels->has_records() && kv) {
    d.kernels_say = kernels_show_conversion(*in.kernels, *kv);
    std::vector<std::string> read = in.kernels->fused_kv_types;
    if (d.kernels_say.empty() && in.degraded_kernels) {
      d.kernels_say = kernels_show_head_size_conversion(*in.kernels, *kv, in.head_size, *in.degraded_kernels);
      if (!d.kernels_say.empty() && d.quote.empty()) {
        cause = in.degraded_kernels->cause;
        remedy = in.degraded_kernels->remedy;
        read = in.kernels->fused_reads_kv;
      }
    }
    if (d.quote.empty() && !d.kernels_say.empty()) {
      d.k_type = kv->k_type;
      d.v_type = kv->v_type;
      d.converted_to = join(read, ", ");
    }
  }
  if (d.quote.empty() && (d.kernels_say.empty() || cause.empty())) return;
  const BuildKernels& b = in.log->build_kernels;
  d.compiled_pairs = b.fa_pairs;
  d.all_pairs_compiled = b.fa_all_pairs;
  if (in.kernels && in.kernels->has_records()) {
    // The conversions of the cache's own types (quantized weights are converted by the same kernels).
    const KernelSummary& k = *in.kernels;
    long long ns = 0;
    for (const auto& [type, t] : k.conversion_ns_by_type)
      if (type == d.k_type || type == d.v_type) ns += t;
    d.conversion_share = k.total_ns > 0 ? static_cast<double>(ns) / static_cast<double>(k.total_ns) : 0.0;
    for (const auto& n : in.kernels->top_conversion) d.conversion_kernels.push_back(kernel_display_name(n));
  }
  d.cause = fill(cause, d, in.head_size);
  d.remedy = fill(remedy, d, in.head_size);
  v.degraded = std::move(d);
}

}  // namespace fp::verdict_detail

namespace fp {

std::string degradation_summary(const Degradation& d) {
  std::string out = "active, degraded: " + d.cause;
  if (!d.quote.empty()) out += " (the runtime, line " + std::to_string(d.line) + ": " + quote(d.quote) + ")";
  else if (!d.kernels_say.empty()) out += " (kernels: " + d.kernels_say + ")";
  return out;
}

std::string degradation_unexpected(const std::optional<Degradation>& d, std::optional<bool> expect_degraded) {
  if (!expect_degraded || *expect_degraded == d.has_value()) return "";
  if (d) return "expected not degraded; " + degradation_summary(*d) + ". Remedy: " + d->remedy;
  return "expected active, degraded (expect.degraded true); the runtime ran the fused path on its own K/V types";
}

}  // namespace fp
