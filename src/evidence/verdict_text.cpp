#include "evidence/verdict_text.h"

#include <sstream>

#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace verdict_detail {
namespace {

std::string conclusion(const Verdict& v) {
  std::string where = v.expected_backend.empty() ? std::string()
                      : v.names_attention_backend ? " with backend " + v.expected_backend
                                                  : " on " + v.expected_backend;
  switch (v.activity) {
    case Activity::NoEvidence:
      return v.missing_required.empty() ? "no evidence either way" : "no evidence: " + join(v.missing_required, "; ");
    case Activity::Active:
      return "fused attention is active" + where;
    case Activity::NotActive:
      break;
  }
  if (v.partial_offload) return "fused attention is only partly" + where + ": partial offload";
  if (!v.missing_backends.empty() && v.levels[1].any_on_expected == true)
    return "fused attention is not active on each of " + v.expected_backend + ": none on " + join(v.missing_backends, ",");
  if (v.silent_fallback)
    return "fused attention is NOT running" + where +
           (v.names_attention_backend ? " (the log names it, the kernels do not)" : " (silent fallback: the log says enabled)");
  return "fused attention is not active" + where;
}

}  // namespace

std::string explain(const Verdict& v, const LogScan* log) {
  std::vector<std::string> parts;
  for (const auto& f : v.levels)
    parts.push_back(f.name + ": " + (f.used ? f.summary : "unavailable (" + f.unavailable_why + ")"));
  if (log && !log->split_counts().empty()) {
    std::vector<std::string> n;
    for (int c : log->split_counts()) n.push_back(std::to_string(c));
    parts.push_back("graph splits " + join(n, ", "));
  }
  std::string text = join(parts, "; ") + ": " + conclusion(v);
  if (v.disagreement) text += ". Levels disagree: " + v.disagreement_detail;
  if (v.degraded) text += ". " + degradation_summary(*v.degraded);
  return text;
}

}  // namespace verdict_detail

std::string format_verdict(const Verdict& v) {
  std::ostringstream out;
  out << "verdict: " << verdict_state_text(v.activity, v.degraded.has_value()) << "\n";
  out << "expected backend: " << (v.expected_backend.empty() ? "(not given, not inferable)" : v.expected_backend);
  if (!v.expected_from.empty()) out << " (" << v.expected_from << ")";
  out << "\n";
  if (!v.fused_backends.empty()) out << "fused op placed on: " << format_counts(v.fused_backends) << "\n";
  if (!v.fused_kernels_by_backend.empty()) {
    std::vector<std::string> parts;
    for (const auto& [b, n] : v.fused_kernels_by_backend) parts.push_back(b + " " + std::to_string(n));
    out << "fused kernels ran on: " << join(parts, ", ") << "\n";
  }
  if (!v.placement_completeness.empty()) out << "placement completeness: " << v.placement_completeness << "\n";
  if (!v.backend_names.empty()) out << "backend names: " << v.backend_names << "\n";
  for (const auto& f : v.levels) {
    out << "level " << f.level << " " << f.name << ": ";
    out << (f.used ? f.summary : "unavailable: " + f.unavailable_why) << "\n";
    for (const auto& q : f.quotes) out << "    " << quote(q) << "\n";
  }
  if (v.partial_offload) out << "partial offload: the fused op is split between backends\n";
  if (v.silent_fallback) out << "silent fallback: the log says enabled, the evidence says otherwise\n";
  if (v.degraded) {
    const Degradation& d = *v.degraded;
    out << "DEGRADED: the fused path runs on converted data: K/V " << d.k_type << "-" << d.v_type;
    if (!d.converted_to.empty()) out << " converted to " << d.converted_to;
    out << "\n";
    if (!d.quote.empty()) out << "    the runtime (line " << d.line << "): \"" << d.quote << "\"\n";  // whole: its words
    if (!d.kernels_say.empty()) out << "    kernels: " << d.kernels_say << "\n";
    out << "    cause: " << d.cause << "\n";
    out << "    this build compiles: "
        << (d.all_pairs_compiled ? std::string("every K/V pair")
                                 : d.compiled_pairs.empty() ? std::string("(not stated in the log)") : join(d.compiled_pairs, ", "))
        << "\n";
    out << "    remedy: " << d.remedy << "\n";
    if (d.conversion_share) {
      out << "    cost: converting the KV cache " << fixed(*d.conversion_share * 100, 1) << "% of GPU time";
      if (!d.conversion_kernels.empty()) out << " (" << join(d.conversion_kernels, ", ") << ")";
      out << "\n";
    } else {
      out << "    cost: not measured (needs a kernel tally, level 3)\n";
    }
  }
  if (v.backends_by_process.size() > 1)
    for (const auto& [proc, backends] : v.backends_by_process) out << "process " << proc << ": " << join(backends, ", ") << "\n";
  if (v.disagreement) out << "DISAGREEMENT: " << v.disagreement_detail << "\n";
  for (const auto& m : v.missing_required) out << "NO EVIDENCE: " << m << "\n";
  out << "\n" << v.explanation << "\n";
  return out.str();
}

}  // namespace fp
