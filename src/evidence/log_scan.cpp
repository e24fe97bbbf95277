#include "evidence/log_scan.h"

#include <algorithm>
#include <cstdlib>

namespace fp {
namespace {

// libstdc++'s regex recurses per character; signature lines are short, so a record longer than
// this (a logged request body) is searched only in its head.
constexpr size_t kMaxSearched = 4096;

double to_mib(const Rule& rule, const std::string& text) { return std::atof(text.c_str()) * rule.scale_to_mib; }

StateLine state_line(const Rule& rule, const std::smatch& m, Quote q) {
  StateLine s;
  s.kind = rule.kind;
  s.state = capture(rule, m, "state");
  s.backend = capture(rule, m, "backend");
  s.reason = capture(rule, m, "reason");
  s.fused = rule.fused;
  if (!s.state.empty()) {
    auto it = rule.states.find(s.state);
    if (it != rule.states.end()) s.fused = it->second;
  }
  s.quote = std::move(q);
  return s;
}

void apply(LogScan& scan, const Rule& rule, const std::smatch& m, Quote q) {
  switch (rule.kind) {
    case RuleKind::Requested:
    case RuleKind::Decision:
      scan.states.push_back(state_line(rule, m, std::move(q)));
      break;
    case RuleKind::Reason:
      scan.reasons.push_back(std::move(q));
      break;
    case RuleKind::Fatal:
      scan.fatal.push_back(std::move(q));
      break;
    case RuleKind::GraphSplits:
    case RuleKind::GraphNodes: {
      CountLine c{std::atoi(capture(rule, m, "value").c_str()), std::atoi(capture(rule, m, "batch").c_str()),
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
      kv.cells = std::atol(capture(rule, m, "cells").c_str());
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
  std::smatch m;
  for (const auto& rec : records) {
    std::string head;
    const std::string* text = &rec.text;
    if (rec.text.size() > kMaxSearched) {
      head = rec.text.substr(0, kMaxSearched);
      text = &head;
    }
    for (const auto& rule : sigs.log) {
      if (!rule_search(rule, *text, m)) continue;
      apply(scan, rule, m, Quote{*text, rec.line, rule.name});
    }
  }
  return scan;
}

bool LogScan::empty() const {
  return states.empty() && reasons.empty() && fatal.empty() && graph_splits.empty() && graph_nodes.empty() &&
         kv_buffers.empty() && kv_totals.empty() && compute_buffers.empty();
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
