#include "evidence/signals.h"

#include <algorithm>

#include "util/text.h"

namespace fp {
namespace {

std::string state_text(const std::optional<bool>& s) {
  if (!s) return "not stated";
  return *s ? "enabled" : "disabled";
}

std::string splits_text(const std::vector<int>& v) {
  if (v.empty()) return "not stated";
  std::vector<std::string> parts;
  for (int n : v) parts.push_back(std::to_string(n));
  return join(parts, ", ");
}

}  // namespace

CheapSignals cheap_signals(const LogScan& scan) {
  CheapSignals s;
  s.flash_attn = scan.resolved().fused;
  s.graph_splits = scan.split_counts();
  std::sort(s.graph_splits.begin(), s.graph_splits.end());
  s.attention_backends = scan.decided_backends();
  std::sort(s.attention_backends.begin(), s.attention_backends.end());
  return s;
}

std::vector<std::string> compare_signals(const CheapSignals& evidence, const CheapSignals& timed) {
  std::vector<std::string> out;
  if (evidence.flash_attn != timed.flash_attn)
    out.push_back("flash attention: evidence pass " + state_text(evidence.flash_attn) + ", timed run " +
                  state_text(timed.flash_attn));
  if (evidence.graph_splits != timed.graph_splits)
    out.push_back("graph splits: evidence pass " + splits_text(evidence.graph_splits) + ", timed run " +
                  splits_text(timed.graph_splits));
  if (evidence.attention_backends != timed.attention_backends)
    out.push_back("attention backend: evidence pass " +
                  (evidence.attention_backends.empty() ? std::string("not stated") : join(evidence.attention_backends, ", ")) +
                  ", timed run " +
                  (timed.attention_backends.empty() ? std::string("not stated") : join(timed.attention_backends, ", ")));
  return out;
}

std::string signals_text(const CheapSignals& s) {
  std::string fa = !s.flash_attn ? "flash attention: not stated" : *s.flash_attn ? "flash attention enabled" : "flash attention disabled";
  std::string splits;
  for (int n : s.graph_splits) splits += (splits.empty() ? "" : ",") + std::to_string(n);
  return fa + "; graph splits " + (splits.empty() ? "not stated" : splits);
}

}  // namespace fp
