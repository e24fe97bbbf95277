#include "evidence/log_scan.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "util/split_list.h"

namespace fp {
namespace {

double to_mib(const Rule& rule, const std::string& text) { return std::atof(text.c_str()) * rule.scale_to_mib; }

// "127,472" -> 127472 (vLLM prints token counts with thousands separators).
int count_value(const std::string& text) {
  std::string digits;
  for (char c : text)
    if (c != ',' && c != '_') digits += c;
  // strtoll and a clamp, not atoi: a count beyond int is undefined behaviour for atoi.
  long long v = std::strtoll(digits.c_str(), nullptr, 10);
  return static_cast<int>(std::clamp<long long>(v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

StateLine state_line(const Rule& rule, const RegexMatch& m, Quote q, const RuntimeSignatures& sigs) {
  StateLine s;
  s.kind = rule.kind;
  s.state = capture(rule, m, "state");
  s.backend = capture(rule, m, "backend");
  if (!s.backend.empty()) s.backend = sigs.canonical_backend(s.backend);
  s.reason = capture(rule, m, "reason");
  s.fused = rule.fused;
  if (!s.state.empty()) {
    auto it = rule.states.find(s.state);
    if (it != rule.states.end()) s.fused = it->second;
  }
  s.quote = std::move(q);
  return s;
}

void apply(LogScan& scan, const Rule& rule, const RegexMatch& m, Quote q, const RuntimeSignatures& sigs) {
  switch (rule.kind) {
    case RuleKind::Requested:
    case RuleKind::Decision:
      scan.states.push_back(state_line(rule, m, std::move(q), sigs));
      break;
    case RuleKind::Reason: {
      std::string backend = capture(rule, m, "backend");
      if (!backend.empty()) backend = sigs.canonical_backend(backend);
      scan.reason_lines.push_back({backend, capture(rule, m, "reason"), q});
      scan.reasons.push_back(std::move(q));
      break;
    }
    case RuleKind::Note:
      scan.notes.push_back(std::move(q));
      break;
    case RuleKind::KvTokens:
      scan.kv_tokens.push_back({count_value(capture(rule, m, "value")), 0, std::move(q)});
      break;
    case RuleKind::Fatal:
      scan.fatal.push_back(std::move(q));
      break;
    case RuleKind::Degraded:
      scan.degraded.push_back({capture(rule, m, "k_type"), capture(rule, m, "v_type"), capture(rule, m, "to_type"),
                               rule.cause, rule.remedy, std::move(q)});
      break;
    case RuleKind::CompiledPairs: {
      BuildKernels& b = scan.build_kernels;
      if (rule.captures.count("pairs")) {
        b.fa_pairs = split_list(capture(rule, m, "pairs"), ',', ListItems::NonEmptyUnique);
        b.fa_pairs_stated = true;
      }
      if (rule.captures.count("all")) b.fa_all_pairs = capture(rule, m, "all") == "1";
      b.quotes.push_back(std::move(q));
      break;
    }
    case RuleKind::GpuArchs:
      scan.build_kernels.gpu_archs = capture(rule, m, "archs");
      scan.build_kernels.quotes.push_back(std::move(q));
      break;
    case RuleKind::GraphSplits:
    case RuleKind::GraphNodes: {
      CountLine c{count_value(capture(rule, m, "value")), count_value(capture(rule, m, "batch")),
                  std::move(q)};
      (rule.kind == RuleKind::GraphSplits ? scan.graph_splits : scan.graph_nodes).push_back(std::move(c));
      break;
    }
    case RuleKind::KvBuffer:
    case RuleKind::ComputeBuffer: {
      DeviceMib d{capture(rule, m, "device"), to_mib(rule, capture(rule, m, "mib")), std::move(q)};
      (rule.kind == RuleKind::KvBuffer ? scan.kv_buffers : scan.compute_buffers).push_back(std::move(d));
      break;
    }
    case RuleKind::KvTotal: {
      KvTotal kv;
      kv.mib = to_mib(rule, capture(rule, m, "mib"));
      kv.cells = std::strtol(capture(rule, m, "cells").c_str(), nullptr, 10);  // saturates, unlike atol
      kv.streams = std::strtol(capture(rule, m, "streams").c_str(), nullptr, 10);
      kv.k_type = capture(rule, m, "k_type");
      kv.v_type = capture(rule, m, "v_type");
      kv.k_mib = to_mib(rule, capture(rule, m, "k_mib"));
      kv.v_mib = to_mib(rule, capture(rule, m, "v_mib"));
      kv.quote = std::move(q);
      scan.kv_totals.push_back(std::move(kv));
      break;
    }
    default:
      break;  // placement and kernel kinds are not level 1
  }
}

std::map<std::string, double> last_by_device(const std::vector<DeviceMib>& lines) {
  std::map<std::string, double> out;
  for (const auto& d : lines) out[d.device] = d.mib;
  return out;
}

}  // namespace

LogScan scan_log(const std::vector<LogRecord>& records, const RuntimeSignatures& sigs) {
  LogScan scan;
  scan.attention_backends = sigs.attention_backends;
  RegexMatch m;
  for (const auto& rec : records) {
    for (const auto& rule : sigs.log) {
      if (!rule_search(rule, rec.text, m)) continue;
      apply(scan, rule, m, Quote{rec.text, rec.line, rule.name, rec.process}, sigs);
    }
  }
  return scan;
}

std::string BuildKernels::fa_pairs_field() const {
  if (fa_all_pairs) return "all";
  std::string out;
  for (const auto& p : fa_pairs) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::optional<bool> BuildKernels::compiles(const std::string& k, const std::string& v) const {
  if (fa_all_pairs) return true;
  if (!fa_pairs_stated) return std::nullopt;
  return std::find(fa_pairs.begin(), fa_pairs.end(), k + "-" + v) != fa_pairs.end();
}

bool LogScan::empty() const {
  return states.empty() && reasons.empty() && fatal.empty() && graph_splits.empty() && graph_nodes.empty() &&
         kv_buffers.empty() && kv_totals.empty() && compute_buffers.empty() && notes.empty() && kv_tokens.empty() &&
         degraded.empty() && !build_kernels.stated();
}

std::string quoted_with_process(const Quote& q) { return q.process.empty() ? q.text : "(" + q.process + ") " + q.text; }

std::vector<const StateLine*> LogScan::backend_decisions() const {
  std::vector<const StateLine*> out;
  for (const auto& s : states)
    if (s.kind == RuleKind::Decision && !s.backend.empty()) out.push_back(&s);
  return out;
}

std::vector<std::string> LogScan::decided_backends() const {
  std::vector<std::string> out;
  for (const StateLine* s : backend_decisions())
    if (std::find(out.begin(), out.end(), s->backend) == out.end()) out.push_back(s->backend);
  return out;
}

ResolvedState LogScan::resolved() const {
  ResolvedState r;
  const StateLine* request = nullptr;
  const StateLine* decision = nullptr;
  for (const auto& s : states) {
    if (s.kind == RuleKind::Requested) {
      request = &s;
      decision = nullptr;
    } else {
      decision = &s;
    }
  }
  if (request) {
    r.requested = request->state;
    r.fused = request->fused;
    r.quotes.push_back(request->quote);
  }
  if (decision) {
    r.fused = decision->fused;
    r.by_decision = true;
    r.quotes.push_back(decision->quote);
  }
  return r;
}

std::vector<int> LogScan::split_counts() const {
  std::vector<int> out;
  for (const auto& c : graph_splits)
    if (std::find(out.begin(), out.end(), c.value) == out.end()) out.push_back(c.value);
  return out;
}

std::map<std::string, double> LogScan::kv_mib_by_device() const { return last_by_device(kv_buffers); }
std::map<std::string, double> LogScan::compute_mib_by_device() const { return last_by_device(compute_buffers); }

std::optional<KvTotal> LogScan::kv_total() const {
  if (kv_totals.empty()) return std::nullopt;
  return kv_totals.back();
}

}  // namespace fp
