#include "measure/kv_headroom.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace fp {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// ggml_row_size: 0 when `n` is not a whole number of blocks.
uint64_t row_bytes(const KvTypeCost& t, long n) {
  if (t.elements <= 0 || t.bytes <= 0 || n <= 0 || n % t.elements != 0) return 0;
  return static_cast<uint64_t>(n / t.elements) * static_cast<uint64_t>(t.bytes);
}

}  // namespace

uint64_t kv_bytes_per_token(const KvShape& s, const KvTypeCost& k, const KvTypeCost& v) {
  const uint64_t kr = row_bytes(k, static_cast<long>(s.kv_heads) * s.head_size_k);
  const uint64_t vr = row_bytes(v, static_cast<long>(s.kv_heads) * s.head_size_v);
  if (kr == 0 || vr == 0 || s.layers <= 0) return 0;
  return static_cast<uint64_t>(s.layers) * (kr + vr);
}

long tokens_in_mib(double mib, uint64_t bytes_per_token) {
  if (bytes_per_token == 0 || !(mib > 0)) return 0;
  return static_cast<long>(std::floor(mib * kMiB / static_cast<double>(bytes_per_token)));
}

std::string mib_text(double mib) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", mib);
  return buf;
}

std::optional<TokensFit> tokens_fit(const std::vector<std::pair<std::string, int64_t>>& left_bytes,
                                    const std::map<std::string, double>& kv_mib_by_device, uint64_t bytes_per_token) {
  if (bytes_per_token == 0) return std::nullopt;
  double total_kv = 0;
  for (const auto& [d, mib] : kv_mib_by_device) total_kv += mib;
  std::optional<TokensFit> out;
  for (const auto& [device, left] : left_bytes) {
    double share = 1.0;
    if (total_kv > 0 && kv_mib_by_device.size() > 1) {
      auto it = kv_mib_by_device.find(device);
      share = it == kv_mib_by_device.end() ? 0.0 : it->second / total_kv;
    }
    if (share <= 0) continue;
    const long fits = static_cast<long>(std::floor(static_cast<double>(left) / (static_cast<double>(bytes_per_token) * share)));
    if (!out || fits < out->tokens) out = TokensFit{fits, device};
  }
  return out;
}

HeadroomOutcome compute_headroom(const HeadroomInput& in) {
  HeadroomOutcome out;
  const KvShape& s = in.shape;
  if (s.layers <= 0 || s.kv_heads <= 0 || s.head_size_k <= 0 || s.head_size_v <= 0) {
    out.why_not = "the model's attention shape is not known (layers, KV heads, head sizes)";
    return out;
  }
  for (const KvTypeCost* t : {&in.k, &in.v})
    if (t->bytes <= 0) {
      out.why_not = "the size of KV cache type " + (t->name.empty() ? std::string("(none)") : t->name) +
                    " is not known (runtime data kv_cache.block_bytes)";
      return out;
    }
  Headroom h;
  h.bytes_per_token = kv_bytes_per_token(s, in.k, in.v);
  h.shape_text = std::to_string(s.layers) + " layers x " + std::to_string(s.kv_heads) + " KV heads x head size " +
                 std::to_string(s.head_size_k) + (s.head_size_v != s.head_size_k ? "/" + std::to_string(s.head_size_v) : "") +
                 ", K " + in.k.name + ", V " + in.v.name;
  if (h.bytes_per_token == 0) {
    out.why_not = "a KV row of " + h.shape_text + " is not a whole number of blocks of its type";
    return out;
  }
  if (in.cells <= 0) {
    out.why_not = "the number of KV cells (the context) is not known";
    return out;
  }
  h.cells = in.cells;
  h.cells_source = in.cells_source;
  h.kv_mib = static_cast<double>(h.bytes_per_token) * static_cast<double>(in.cells) / kMiB;
  if (in.runtime_kv_mib) {
    // The runtime prints its buffers with two decimals.
    h.kv_agrees = std::fabs(*in.runtime_kv_mib - h.kv_mib) <= 0.0051 + 1e-9;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s the runtime's own %.2f MiB", h.kv_agrees ? "agrees with" : "DIFFERS from",
                  *in.runtime_kv_mib);
    h.kv_check = buf;
  } else {
    h.kv_check = "not checked: the runtime stated no KV buffer size";
  }
  h.compute_mib = in.compute_mib;
  h.free = in.free;
  if (in.free.empty()) return {h, ""};

  std::vector<std::pair<std::string, int64_t>> left;
  for (const FreeOn& f : in.free) left.push_back({f.device, static_cast<int64_t>(f.free_bytes)});
  const auto fit = tokens_fit(left, in.kv_mib_by_device, h.bytes_per_token);
  if (!fit) return {h, ""};
  const long more = fit->tokens;
  h.limited_by = fit->limited_by;
  h.more_tokens = more;
  h.context_fit = in.cells + more;
  return {h, ""};
}

}  // namespace fp
